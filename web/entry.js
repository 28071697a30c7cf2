import createScatterplot, { createRenderer } from 'regl-scatterplot';
window.createScatterplot = createScatterplot;
window.createScatterplotRenderer = createRenderer;
