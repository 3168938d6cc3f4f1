// The schedule's charts, drawn from the numbers and labels Go gives them:
// when each retry starts and the delay before it, and the timeline of the
// attempts.
import { $ } from './dom.js';
import { t } from './i18n.js';
import { axes, el, leftMargin, place, rightMargin, textWidths, width } from './svg.js';

export function drawCharts(r) {
  const c = r.chart;
  $('chart-text').textContent = c.text;
  const empty = c.retries === 0;
  // No retries: a sentence instead of two empty full-size charts.
  $('chart').toggleAttribute('hidden', empty); // an SVG element has no hidden property
  $('legend').hidden = empty;
  $('timeline-box').hidden = empty;
  $('chart-empty').hidden = !empty;
  $('chart-empty').textContent = empty ? c.text : '';
  for (const li of document.querySelectorAll('.legend .needs-deadline')) li.hidden = !r.summary.verdict;
  if (empty) return;
  chart(r);
  timeline(r);
}

// chart draws two panels over the same retries: when each retry starts
// (the band from the earliest to the latest, the mean dotted, the worst
// case solid with dots, the deadline dashed, the first late retry
// crossed) and, below, the delay before each retry (a bar from min to
// max with a line at the mean). Each panel has its own scale.
function chart(r) {
  const svg = $('chart');
  const c = r.chart;
  const W = width(svg);
  const small = W < 560;
  // Room on the right for the end values (12px text), on a wide screen.
  const ends = Math.max(c.worstEnd.length, c.meanEnd.length);
  const L = leftMargin([...c.total.ticks, ...c.delay.ticks].map((k) => k.label)), R = small ? 14 : Math.ceil(ends * 7) + 16, T = 24, gap = 44, B = 40;
  const h1 = small ? 150 : 190, h2 = small ? 100 : 120;
  const H = T + h1 + gap + h2 + B;
  const pw = W - L - R;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const nodes = [];
  const n = c.retries;
  // Retry r sits in the middle of its slot of the axis.
  const xr = (retry) => L + pw * (retry - 0.5) / n;

  function panel(scale, top, height, o) {
    const y = (ms) => top + height - place(scale, ms) * height;
    axes(nodes, { x: L, y: top, w: pw, h: height }, W, H, { ...o, yTicks: scale.ticks.map((k) => ({ at: y(k.ms), label: k.label })) });
    return y;
  }

  const y1 = panel(c.total, T, h1, { title: t('js.panelTotal'), yTitle: t('js.axisStart') });
  const top2 = T + h1 + gap;
  // Retry numbers along the bottom: 1, round numbers and the last.
  const rw = textWidths(svg, c.retryTicks.map(String));
  const y2 = panel(c.delay, top2, h2, {
    title: t('js.panelDelay'), yTitle: t('js.axisDelay'), xTitle: t('js.axisRetry'),
    xTicks: c.retryTicks.map((k, i) => ({ at: xr(k), label: String(k), w: rw[i] })), xMarks: true,
  });
  const bars = c.bars;
  // Bottom panel: one bar per retry or group of retries.
  for (const b of bars) {
    const x0 = L + pw * (b.first - 1) / n, x1 = L + pw * b.last / n;
    const w = Math.max((x1 - x0) * 0.7, 1), xm = (x0 + x1) / 2;
    const top = y2(b.maxMs), bottom = y2(b.minMs);
    nodes.push(el('rect', { class: 'bar', x: xm - w / 2, y: top, width: w, height: Math.max(bottom - top, 1.5) }));
    nodes.push(el('line', { class: 'mean', x1: xm - w / 2 - 1, x2: xm + w / 2 + 1, y1: y2(b.meanMs), y2: y2(b.meanMs) }));
  }
  // Top panel.
  const pt = (b, key) => `${xr(b.last).toFixed(1)},${y1(b[key]).toFixed(1)}`;
  const lo = bars.map((b) => pt(b, 'totalMinMs'));
  const hi = bars.map((b) => pt(b, 'totalMaxMs')).reverse();
  nodes.push(el('polygon', { class: 'cum-band', points: lo.concat(hi).join(' ') }));
  nodes.push(el('polyline', { class: 'cum-mean', points: bars.map((b) => pt(b, 'totalMeanMs')).join(' ') }));
  nodes.push(el('polyline', { class: 'cum', points: bars.map((b) => pt(b, 'totalMaxMs')).join(' ') }));
  if (bars.length <= 60) for (const b of bars) nodes.push(el('circle', { class: 'cum-dot', cx: xr(b.last), cy: y1(b.totalMaxMs), r: 3.5 }));
  const end = bars[bars.length - 1];
  // The end values, right of the lines (above them on a phone).
  const ex = small ? W - R : xr(end.last) + 8, anchor = small ? 'end' : 'start';
  const ey = y1(end.totalMaxMs), my = y1(end.totalMeanMs);
  nodes.push(el('text', { class: 'end-label', x: ex, y: small ? ey - 8 : ey + 4, 'text-anchor': anchor }, c.worstEnd));
  if (Math.abs(my - ey) > 14) nodes.push(el('text', { class: 'end-label mean-label', x: ex, y: small ? my + 16 : my + 4, 'text-anchor': anchor }, c.meanEnd));
  const v = r.summary.verdict;
  if (v) {
    const dy = y1(v.deadlineMs);
    nodes.push(el('line', { class: 'deadline', x1: L, x2: W - R, y1: dy, y2: dy }));
    nodes.push(el('text', { class: 'deadline-label', x: L + 6, y: dy - 6 }, v.deadline));
    if (c.cross > 0) {
      const b = bars.find((x) => x.last >= c.cross) || end;
      const cx = xr(b.last), cy = y1(b.totalMaxMs);
      nodes.push(el('path', { class: 'cross', d: `M${cx - 7},${cy - 7} L${cx + 7},${cy + 7} M${cx + 7},${cy - 7} L${cx - 7},${cy + 7}` }));
      // Above and left of the mark, where the rising worst-case line is
      // not; a phone has no room for it, and the legend names the mark.
      if (!small) nodes.push(el('text', { class: 'cross-label', x: Math.max(cx - 12, L + 60), y: cy - 12, 'text-anchor': cx - 12 > L + 200 ? 'end' : 'start' }, t('js.late', { n: c.cross })));
    }
  }
  svg.replaceChildren(...nodes);
}

// timeline draws each attempt on a time axis from t = 0: a line from its
// earliest to its latest start, a dot at the mean, and the deadline. When
// the attempts lie closer than a line is thick, the lines would merge into
// one block: it draws their band, mean and latest start as the schedule's
// chart does, with the same marks its legend names.
function timeline(r) {
  const svg = $('timeline');
  const c = r.chart;
  const W = width(svg);
  const atts = c.attempts;
  const n = atts[atts.length - 1].n;
  const yGap = 8;
  // The time labels' widths as drawn: the last one, at the right end,
  // sets the room right of the plot.
  const ws = textWidths(svg, c.total.ticks.map((k) => k.label));
  const L = leftMargin(c.attemptTicks.map(String), yGap), T = 10, B = 40;
  const R = rightMargin(16, W, L, c.total.ticks.map((k, i) => ({ f: place(c.total, k.ms), w: ws[i] })));
  const h = Math.min(Math.max(atts.length * 14, 90), 220);
  const H = T + h + B;
  const pw = W - L - R;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const nodes = [];
  const x = (ms) => L + place(c.total, ms) * pw;
  const y = (k) => T + (n === 1 ? h / 2 : (k - 1) / (n - 1) * h);
  axes(nodes, { x: L, y: T, w: pw, h }, W, H, {
    xTicks: c.total.ticks.map((k, i) => ({ at: x(k.ms), label: k.label, w: ws[i] })), xGrid: true,
    yTicks: c.attemptTicks.map((k) => ({ at: y(k), label: String(k) })), yGrid: false, yGap,
    left: false, yTitle: t('js.axisAttempt'), xTitle: t('js.axisTime'),
  });
  const v = r.summary.verdict;
  if (v) nodes.push(el('line', { class: 'deadline', x1: x(v.deadlineMs), x2: x(v.deadlineMs), y1: T, y2: T + h }));
  if (atts.length > 1 && h / (atts.length - 1) < 4) {
    const pts = (key) => atts.map((a) => `${x(a[key]).toFixed(1)},${y(a.n).toFixed(1)}`);
    nodes.push(el('polygon', { class: 'cum-band', points: pts('minMs').concat(pts('maxMs').reverse()).join(' ') }));
    nodes.push(el('polyline', { class: 'cum-mean', points: pts('meanMs').join(' ') }));
    nodes.push(el('polyline', { class: 'cum', points: pts('maxMs').join(' ') }));
  } else {
    for (const a of atts) {
      nodes.push(el('line', { class: 'span', x1: x(a.minMs), x2: Math.max(x(a.maxMs), x(a.minMs) + 1.5), y1: y(a.n), y2: y(a.n) }));
      if (atts.length <= 60) nodes.push(el('circle', { class: 'cum-dot', cx: x(a.meanMs), cy: y(a.n), r: 3 }));
    }
  }
  svg.replaceChildren(...nodes);
}
