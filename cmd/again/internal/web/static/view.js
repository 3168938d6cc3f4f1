// The views further down the page that a Go function computes from the
// inputs, the storm view and the shedding view: each costs more than the
// rest of an update, so it runs when typing pauses, only for inputs the
// calculator accepts, and only when its inputs or the language changed.
import { call } from './calls.js';
import { $, setCommand } from './dom.js';
import { lang } from './i18n.js';
import { readInputs } from './inputs.js';

// lazyView returns the view in the element box: schedule runs the Go
// function fn (againStorm, againShed) on the inputs but the keys in skip
// (another view's own input, so that typing there does not run this one)
// once typing pauses for pause ms and no edit is being computed, and
// draws its result with draw; cancel forgets a scheduled run (the inputs
// are invalid); redraw draws the result again, at the page's new width.
// When a result is drawn, document.body's data attribute name holds the
// inputs and language it is for.
export function lazyView(box, fn, skip, draw, name, pause) {
  let shownFor = null; // the inputs and language the view shows
  let shown = null; // and its result
  let timer = 0;
  const inputs = () => {
    const v = readInputs();
    for (const k of skip) delete v[k];
    return JSON.stringify(v);
  };
  async function run() {
    // Invalid inputs keep the old view, greyed out with every other result.
    if ($('calculator').classList.contains('invalid')) return;
    // The worker runs one call at a time: an edit being computed comes
    // first, and the view waits for another pause.
    if (document.body.dataset.busy === 'true') {
      timer = setTimeout(run, pause);
      return;
    }
    const text = inputs();
    const key = text + lang();
    if (shownFor === key) {
      $(box).classList.remove('stale');
      return;
    }
    const r = JSON.parse(await call(fn, text, lang()));
    if (inputs() + lang() !== key) return; // an edit came in meanwhile
    shownFor = key;
    shown = r;
    draw(r);
    $(box).classList.remove('stale');
    document.body.dataset[name] = key;
  }
  return {
    schedule() {
      clearTimeout(timer);
      $(box).classList.add('stale');
      timer = setTimeout(run, pause);
    },
    cancel: () => clearTimeout(timer),
    redraw() {
      if (shown) draw(shown);
    },
  };
}

// showResult shows a view's result r: its error under the view's input
// (the element input, marked invalid) with the chart svg and the legend
// hidden, or its text and command, in the elements named prefix-legend,
// prefix-text and prefix-command. It reports whether there is a chart to
// draw.
export function showResult(r, input, svg, prefix) {
  const bad = !!r.error;
  $(input + '-err').textContent = bad ? r.error : '';
  if (bad) $(input).setAttribute('aria-invalid', 'true');
  else $(input).removeAttribute('aria-invalid');
  svg.toggleAttribute('hidden', bad); // an SVG element has no hidden property
  $(prefix + '-legend').hidden = bad;
  $(prefix + '-text').textContent = bad ? '' : r.text;
  setCommand($(prefix + '-command'), bad ? '' : r.command);
  return !bad;
}
