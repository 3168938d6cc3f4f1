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

// textWidths returns the widths of labels in the font of class cls, as
// the SVG lays them out (in its user units, the px of a viewBox as wide
// as its box), or estimated at 6.6 px a character where it lays out
// nothing (a hidden SVG).
export function textWidths(svg, labels, cls = 'tick') {
  const probe = el('text', { class: cls, x: 0, y: 0, visibility: 'hidden' });
  svg.append(probe);
  const ws = labels.map((s) => {
    probe.textContent = s;
    return probe.getComputedTextLength() || s.length * 6.6;
  });
  probe.remove();
  return ws;
}

// rightMargin returns the room right of a plot, at least min, for the
// x-axis labels of ticks [{f, w}] (f the tick's fraction of the plot's
// width, w its label's width) to sit centred under their ticks inside an
// SVG W wide, 2 px from its edge, with L the plot's left margin. Only
// ticks near the right end ask for more than min.
export const rightMargin = (min, W, L, ticks) => Math.max(min,
  ...ticks.filter((k) => k.f > 0).map((k) => Math.ceil(W - L - (W - L - 2 - k.w / 2) / k.f)));

// xLabels chooses and places the labels of x ticks [{at, label, w}] in an
// SVG W wide: each centred under its tick, or moved inside the SVG, 2 px
// from its edges. When two would come closer than gap px, it labels only
// every k-th tick from the first, for the smallest k that keeps them
// apart: a step 2, 3 … times the ticks' own, never overlapping labels,
// however long the durations or narrow the screen. It returns the kept
// ticks with the left and right ends x0, x1 of their labels.
export function xLabels(ticks, W, gap = 8) {
  const placed = ticks.map((k) => {
    const w = k.w ?? k.label.length * 6.6;
    const x0 = Math.max(2, Math.min(k.at - w / 2, W - 2 - w));
    return { ...k, x0, x1: x0 + w };
  });
  for (let k = 1; k <= placed.length; k++) {
    const kept = placed.filter((_, i) => i % k === 0);
    if (kept.every((p, i) => i === 0 || kept[i - 1].x1 + gap <= p.x0)) return kept;
  }
  return placed.slice(0, 1);
}

// axes draws the frame of a plot into nodes. box is the plot area {x, y,
// w, h} in an SVG W wide and H high. o says what to draw, all optional:
//   yTicks: [{at, label}] at heights at, each labelled left of the box,
//     with a gridline across unless yGrid is false; yGap is the labels'
//     distance from the box (6);
//   xTicks: [{at, label, w}] at positions at, labelled below the box as
//     xLabels chooses and places them (w the label's measured width,
//     from textWidths); xGrid draws a gridline up through the box at every
//     tick, xMarks a short mark below it;
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
  }
  for (const tick of xLabels(o.xTicks || [], W)) {
    // Centred under its tick, unless xLabels moved it off an edge.
    const centred = Math.abs(tick.x0 + (tick.x1 - tick.x0) / 2 - tick.at) < 0.5;
    const right = tick.at > W / 2;
    nodes.push(el('text', {
      class: 'tick', x: centred ? tick.at : right ? W - 2 : 2, y: y + h + 16,
      'text-anchor': centred ? 'middle' : right ? 'end' : 'start',
    }, tick.label));
  }
  if (o.bottom !== false) nodes.push(el('line', { class: 'axis', x1: x, x2: x + w, y1: y + h, y2: y + h }));
  if (o.left !== false) nodes.push(el('line', { class: 'axis', x1: x, x2: x, y1: y, y2: y + h }));
  if (o.title) nodes.push(el('text', { class: 'panel-title', x, y: y - 9 }, o.title));
  if (o.yTitle) nodes.push(el('text', { class: 'axis-title', x: 12, y: y + h / 2, transform: `rotate(-90 12 ${y + h / 2})`, 'text-anchor': 'middle' }, o.yTitle));
  if (o.xTitle) nodes.push(el('text', { class: 'axis-title', x: x + w / 2, y: H - 4, 'text-anchor': 'middle' }, o.xTitle));
}
