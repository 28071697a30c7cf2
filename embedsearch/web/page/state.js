// What the search page's modules share: the bands the server reads cosines by, the search on screen (so
// "More results" asks for its next page and an export for the same list) and the reader's marks.
export const LONG_QUERY = 1500;  // longer text goes by POST (a URL has room for about 2,000 characters)
export const MAX_K = 100;

export const state = {
  bands: {related: 0.3, close: 0.5, similar_related: 0.35, similar_close: 0.65},
  onScreen: null,  // {q, k, mode, filters, hits}
  capped: false,  // more results were asked for than one search gives
  marks: {like: [], unlike: []},
  view: null,  // a recommendation on screen: what an export asks for again
};
