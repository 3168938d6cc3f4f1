// The storm view: the clients failing at once and retrying on the
// schedule, simulated by the Go code of `again sim storm`. Simulating
// costs more than the rest of an update, and the view is further down the
// page: it runs when typing pauses.
import { call } from './calls.js';
import { $, setCommand } from './dom.js';
import { lang, t } from './i18n.js';
import { readInputs } from './inputs.js';
import { axes, el, leftMargin, rightMargin, textWidths, width } from './svg.js';

let shownFor = null; // the inputs and language the view shows
let shown = null; // and its result
let timer = 0;

export function scheduleStorm() {
  clearTimeout(timer);
  $('storm-box').classList.add('stale');
  timer = setTimeout(runStorm, 300);
}

// cancelStorm forgets a scheduled run: the inputs are invalid.
export const cancelStorm = () => clearTimeout(timer);

// redrawStorm draws the view again, at the page's new width.
export function redrawStorm() {
  if (shown) drawStorm(shown);
}

async function runStorm() {
  // Only for inputs the calculator accepts: invalid ones keep the old
  // storm, greyed out with every other result.
  if ($('calculator').classList.contains('invalid')) return;
  const inputs = JSON.stringify(readInputs());
  const key = inputs + lang();
  if (shownFor === key) {
    $('storm-box').classList.remove('stale');
    return;
  }
  const r = JSON.parse(await call('Storm', inputs, lang()));
  if (JSON.stringify(readInputs()) + lang() !== key) return; // an edit came in meanwhile
  shownFor = key;
  shown = r;
  drawStorm(r);
  $('storm-box').classList.remove('stale');
  document.body.dataset.storm = key;
}

// drawStorm draws the attempts per bucket: the jittered ones as filled
// bars, the ones without jitter as outlined bars over them.
function drawStorm(r) {
  const svg = $('storm');
  const bad = !!r.error;
  $('clients-err').textContent = bad ? r.error : '';
  if (bad) $('clients').setAttribute('aria-invalid', 'true');
  else $('clients').removeAttribute('aria-invalid');
  svg.toggleAttribute('hidden', bad);
  $('storm-legend').hidden = bad;
  $('storm-text').textContent = bad ? '' : r.text;
  setCommand($('storm-command'), bad ? '' : r.command);
  if (bad) return;
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
