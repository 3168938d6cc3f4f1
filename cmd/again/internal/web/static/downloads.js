// The CSV and JSON downloads. Writing them for a long schedule costs more
// than the rest of an update, so they are written when typing pauses, or
// when a link is followed before that; always for the last valid inputs.
import { call } from './calls.js';
import { $ } from './dom.js';

const DOWNLOADS = [['dl-csv', 'csv', 'text/csv'], ['dl-json', 'json', 'application/json']];
let wanted = null; // the inputs the links are to hold, as JSON
let heldFor = null; // the inputs the links hold
let timer = 0;
let blobs = [];

// scheduleDownloads has the links written for inputs (JSON) soon.
export function scheduleDownloads(inputs) {
  wanted = inputs;
  clearTimeout(timer);
  timer = setTimeout(prepareDownloads, 300);
}

async function prepareDownloads() {
  clearTimeout(timer);
  const inputs = wanted;
  if (!inputs || heldFor === inputs) return;
  const files = await Promise.all(DOWNLOADS.map(([, format]) => call('Export', inputs, format)));
  if (inputs !== wanted) return; // an edit came in meanwhile
  for (const u of blobs) URL.revokeObjectURL(u);
  blobs = [];
  DOWNLOADS.forEach(([id, , type], i) => {
    const d = JSON.parse(files[i]);
    const u = URL.createObjectURL(new Blob([d.text || d.error || ''], { type }));
    blobs.push(u);
    $(id).href = u;
  });
  heldFor = inputs;
}

// wireDownloads makes a link followed before its file is written write
// it, then follow it.
export function wireDownloads() {
  for (const [id] of DOWNLOADS) {
    $(id).addEventListener('click', (e) => {
      if (heldFor === wanted) return;
      e.preventDefault();
      prepareDownloads().then(() => $(id).click());
    });
  }
}
