// The storm view: the clients failing at once and retrying on the
// schedule, simulated by the Go code of `again sim storm`. Simulating
// costs more than the rest of an update, and the view is further down the
// page: it runs when typing pauses.
import { $ } from './dom.js';
import { t } from './i18n.js';
import { axes, el, leftMargin, rightMargin, textWidths, width } from './svg.js';
import { lazyView, showResult } from './view.js';

// stormView schedules, cancels and redraws the view (see lazyView).
export const stormView = lazyView('storm-box', 'Storm', ['shed'], drawStorm, 'storm', 300);

// drawStorm draws the attempts per bucket: the jittered ones as filled
// bars, the ones without jitter as outlined bars over them.
function drawStorm(r) {
  const svg = $('storm');
  if (!showResult(r, 'clients', svg, 'storm')) return;
  $('storm-key-flat').textContent = r.legend[0];
  $('storm-key-jit').textContent = r.legend[1];
  $('storm-key-jit-item').hidden = !r.jittered;
  const W = width(svg);
  const n = r.shown, span = n * r.bucketMs;
  // The time labels up to the last bucket, their widths as drawn: the
  // last one sets the room right of the plot.
  const ticks = r.time.ticks.filter((k) => k.ms <= span);
  const ws = textWidths(svg, ticks.map((k) => k.label));
  const L = leftMargin(r.counts.map(String)), T = 12, h = W < 560 ? 150 : 190, B = 40;
  const R = rightMargin(14, W, L, ticks.map((k, i) => ({ f: k.ms / Math.max(span, 1e-9), w: ws[i] })));
  const H = T + h + B, pw = W - L - R;
  const box = { x: L, y: T, w: pw, h };
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const nodes = [];
  const top = r.counts[r.counts.length - 1] || 1;
  const y = (n) => T + h - n / top * h;
  // The gridlines under the bars, the axes over them.
  axes(nodes, box, W, H, { yTicks: r.counts.map((c) => ({ at: y(c), label: String(c) })), bottom: false, left: false });
  const x = (ms) => L + Math.min(ms, span) / Math.max(span, 1e-9) * pw;
  const bw = pw / Math.max(n, 1);
  r.attempts.slice(0, n).forEach((a, i) => {
    if (r.jittered && a > 0) nodes.push(el('rect', { class: 'storm-jit', x: L + i * bw, y: y(a), width: Math.max(bw - 0.5, 0.8), height: y(0) - y(a) }));
  });
  r.noJitter.slice(0, n).forEach((a, i) => {
    if (a > 0) nodes.push(el('rect', { class: 'storm-flat', x: L + i * bw + bw * 0.2, y: y(a), width: Math.max(bw * 0.6, 1), height: y(0) - y(a) }));
  });
  axes(nodes, box, W, H, {
    xTicks: ticks.map((k, i) => ({ at: x(k.ms), label: k.label, w: ws[i] })),
    yTitle: r.yTitle, xTitle: t('js.axisFailure'),
  });
  svg.replaceChildren(...nodes);
}
