"""Building an index: embedding at write time and the two build pipelines (in process, and on Ray with the
texts read by the workers), over ``store``'s writer."""
