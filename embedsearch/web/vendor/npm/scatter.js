export { default as createScatterplot } from 'regl-scatterplot';
