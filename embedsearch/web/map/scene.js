// The map's drawing state the other modules read: the plot, the points in map units, each point's topic, the
// camera's view matrix, and what the page has inflated (ids, titles, abstracts).
export const mapBox = document.getElementById("map");
export const canvas = document.getElementById("canvas");

export const scene = {plot: null, points: null, topicOf: null, view: null,
                      ids: null, titles: null, texts: null, byId: null, drawn: 0, ready: false, hidden: new Set()};

export function size() { const r = mapBox.getBoundingClientRect(); return [Math.max(r.width, 1), Math.max(r.height, 1)]; }

// Map units -> CSS px inside the map, from the camera's view matrix (regl-scatterplot: clip x is divided
// by the width/height ratio, y is not; the scale is the same on both axes).
export function project(x, y) {
  const [w, h] = size(), v = scene.view;
  const cx = (v[0] * x + v[12]) * h / w, cy = v[5] * y + v[13];
  return [w * (cx + 1) / 2, h * (1 - cy) / 2];
}

export function scale() { return size()[1] / 2 * scene.view[5]; }
