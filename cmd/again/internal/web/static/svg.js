// Drawing the page's three charts: SVG elements, scales and one axes
// helper, so that the schedule, the timeline and the storm view label
// their axes alike.
const SVGNS = 'http://www.w3.org/2000/svg';

export function el(name, attrs, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// width returns the width an SVG element is laid out at, for its viewBox.
export const width = (svg) => Math.max(300, Math.round(svg.getBoundingClientRect().width) || 720);

// place maps a duration in ms to a fraction of an axis from its scale (as
// the Go code sends it): 0 at the bottom (or left), 1 at the top.
export function place(scale, ms) {
  if (scale.log) {
    const lo = Math.log(scale.bottom), hi = Math.log(scale.top);
    return (Math.log(Math.max(ms, scale.bottom)) - lo) / Math.max(hi - lo, 1e-9);
  }
  return Math.min(ms, scale.top) / Math.max(scale.top, 1e-9);
}

// leftMargin returns the room left of a plot for its y-axis title (at x =
// 12, rotated) and tick labels ending gap px left of the box: enough for
// the widest label, estimated at 6.4 px a character of the 11 px tick
// font, with 20 px from the SVG's edge where the title is.
export const leftMargin = (labels, gap = 6) => Math.max(40, Math.ceil(Math.max(0, ...labels.map((s) => s.length)) * 6.4) + gap + 20);

// axes draws the frame of a plot into nodes. box is the plot area {x, y,
// w, h} in an SVG W wide and H high. o says what to draw, all optional:
//   yTicks: [{at, label}] at heights at, each labelled left of the box,
//     with a gridline across unless yGrid is false; yGap is the labels'
//     distance from the box (6);
//   xTicks: [{at, label}] at positions at, labelled below the box, kept
//     inside the SVG at its right edge; xGrid draws a gridline up through
//     the box, xMarks a short mark below it;
//   bottom, left: the axis lines (both unless false);
//   title: above the box; yTitle: rotated, at the SVG's left edge;
//   xTitle: centred under the box at the SVG's bottom.
export function axes(nodes, box, W, H, o) {
  const { x, y, w, h } = box;
  for (const tick of o.yTicks || []) {
    if (o.yGrid !== false) nodes.push(el('line', { class: 'grid', x1: x, x2: x + w, y1: tick.at, y2: tick.at }));
    nodes.push(el('text', { class: 'tick', x: x - (o.yGap ?? 6), y: tick.at + 4, 'text-anchor': 'end' }, tick.label));
  }
  for (const tick of o.xTicks || []) {
    if (o.xGrid) nodes.push(el('line', { class: 'grid', x1: tick.at, x2: tick.at, y1: y, y2: y + h }));
    if (o.xMarks) nodes.push(el('line', { class: 'axis', x1: tick.at, x2: tick.at, y1: y + h, y2: y + h + 4 }));
    const edge = o.xMarks ? false : tick.at + tick.label.length * 3.3 > W - 2;
    nodes.push(el('text', { class: 'tick', x: edge ? W - 2 : tick.at, y: y + h + 16, 'text-anchor': edge ? 'end' : 'middle' }, tick.label));
  }
  if (o.bottom !== false) nodes.push(el('line', { class: 'axis', x1: x, x2: x + w, y1: y + h, y2: y + h }));
  if (o.left !== false) nodes.push(el('line', { class: 'axis', x1: x, x2: x, y1: y, y2: y + h }));
  if (o.title) nodes.push(el('text', { class: 'panel-title', x, y: y - 9 }, o.title));
  if (o.yTitle) nodes.push(el('text', { class: 'axis-title', x: 12, y: y + h / 2, transform: `rotate(-90 12 ${y + h / 2})`, 'text-anchor': 'middle' }, o.yTitle));
  if (o.xTitle) nodes.push(el('text', { class: 'axis-title', x: x + w / 2, y: H - 4, 'text-anchor': 'middle' }, o.xTitle));
}
