// The shedding view: clients that back off on the schedule, during a load
// spike, against a server that queues everything and one that sheds load,
// simulated by the Go code of `again sim outage`. Like the storm view, it
// costs more than the rest of an update and lies further down the page: it
// runs when typing pauses.
import { $ } from './dom.js';
import { axes, el, leftMargin, place, rightMargin, textWidths, width } from './svg.js';
import { lazyView, showResult } from './view.js';

// shedView schedules, cancels and redraws the view (see lazyView). It
// waits for a longer pause than the storm view: its run takes about 0.1 s
// of the worker, which an edit made meanwhile waits for.
export const shedView = lazyView('shed-box', 'Shed', ['clients'], drawShed, 'shed', 800);

// drawShed draws the requests per second over the run: the spike shaded,
// the new requests dotted, the successes of the server that queues
// everything dashed and of the one that sheds solid.
function drawShed(r) {
  const svg = $('shed-chart');
  // The note that the fixed limit does not fit the server (Go's
  // outage.ShedCapacity, as again sim outage warns), hidden otherwise.
  $('shed-fit').textContent = r.note || '';
  $('shed-fit').hidden = !r.note;
  if (!showResult(r, 'shed', svg, 'shed')) return;
  ['demand', 'bare', 'on', 'spike'].forEach((k, i) => { $('shed-key-' + k).textContent = r.legend[i]; });
  const W = width(svg);
  const ticks = r.time.ticks;
  const ws = textWidths(svg, ticks.map((k) => k.label));
  const L = leftMargin(r.counts.map(String)), T = 12, h = W < 560 ? 150 : 190, B = 40;
  const R = rightMargin(14, W, L, ticks.map((k, i) => ({ f: place(r.time, k.ms), w: ws[i] })));
  const H = T + h + B, pw = W - L - R;
  const box = { x: L, y: T, w: pw, h };
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const nodes = [];
  const top = r.counts[r.counts.length - 1] || 1;
  const y = (n) => T + h - n / top * h;
  const x = (ms) => L + place(r.time, ms) * pw;
  nodes.push(el('rect', { class: 'shed-spike', x: x(r.spikeMs[0]), y: T, width: x(r.spikeMs[1]) - x(r.spikeMs[0]), height: h }));
  axes(nodes, box, W, H, { yTicks: r.counts.map((c) => ({ at: y(c), label: String(c) })), bottom: false, left: false });
  // Each second's count at the middle of its second.
  const line = (cls, counts) => nodes.push(el('polyline', {
    class: cls, points: counts.map((c, i) => `${x((i + 0.5) * 1000).toFixed(1)},${y(c).toFixed(1)}`).join(' '),
  }));
  line('shed-demand', r.demand);
  line('shed-bare', r.bare);
  line('shed-on', r.shed);
  axes(nodes, box, W, H, {
    xTicks: ticks.map((k, i) => ({ at: x(k.ms), label: k.label, w: ws[i] })),
    yTitle: r.yTitle, xTitle: r.xTitle,
  });
  svg.replaceChildren(...nodes);
}
