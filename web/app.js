// Page glue for index.html: "copy embed code" and "copy link" under each figure, and a notice for URL
// parameters no widget on the page claimed. Widgets work without this file (see embed-example.html).
import { unclaimedParams, flushState, onStateWritten } from './state.js';

const WIDGETS = ['tally-memory-budget', 'tally-compute', 'tally-float', 'tally-roofline', 'tally-inference'];
// Every widget the page waits on before it reports ready (the step widget has no embed tools yet, so it is not in WIDGETS).
const WIRED = [...WIDGETS, 'tally-step'];
const scriptUrl = new URL('tally-widgets.js', import.meta.url).href;

function attributesOf(widget) {
  if (typeof widget.embedAttributes === 'function') return widget.embedAttributes();
  return Object.fromEntries([...widget.attributes].filter((a) => a.name !== 'id').map((a) => [a.name, a.value]));
}

/** The HTML a course page needs to show this widget as it is now. */
export function embedCode(widget) {
  const attrs = Object.entries(attributesOf(widget))
    .map(([k, v]) => ` ${k}="${String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`).join('');
  return `<script type="module" src="${scriptUrl}"></script>\n<${widget.localName}${attrs}></${widget.localName}>`;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function addTools(figure) {
  const widget = figure.querySelector(WIDGETS.join(','));
  if (!widget || figure.querySelector('.figure-tools')) return;
  const tools = document.createElement('div');
  tools.className = 'figure-tools';
  const embed = document.createElement('button');
  embed.type = 'button';
  embed.textContent = 'Copy embed code';
  const link = document.createElement('button');
  link.type = 'button';
  link.textContent = 'Copy link to this state';
  const status = document.createElement('span');
  status.setAttribute('role', 'status');
  const code = document.createElement('pre');
  code.hidden = true;
  code.className = 'embed-code';
  code.setAttribute('aria-label', 'Embed code');
  embed.addEventListener('click', async () => {
    code.textContent = embedCode(widget);
    code.hidden = false;
    status.textContent = (await copy(code.textContent)) ? 'Embed code copied.' : 'Select the code below and copy it.';
  });
  link.addEventListener('click', async () => {
    flushState();
    const url = new URL(location.href);
    url.hash = figure.closest('section')?.id ?? '';
    status.textContent = (await copy(url.href)) ? 'Link copied.' : url.href;
  });
  tools.append(embed, link, status, code);
  figure.append(tools);
  // Keep an open embed snippet in step with the widget's current state.
  onStateWritten(() => { if (!code.hidden) code.textContent = embedCode(widget); });
}

function showPageNotice(message) {
  const box = document.getElementById('page-notice');
  if (!box) return;
  box.textContent = message; // textContent only: URL text never becomes markup
  box.hidden = false;
}

async function main() {
  for (const figure of document.querySelectorAll('figure.widget-figure')) addTools(figure);
  // tally-widgets.js (loaded before this module) has defined every widget this site ships; a placeholder
  // whose widget is not built yet stays inert and is not waited for.
  const widgets = [...document.querySelectorAll(WIRED.join(','))].filter((w) => customElements.get(w.localName));
  // The first screen is interactive: the widgets near the viewport at load are wired (the others mount later,
  // web/widgets/base.js); a page whose first screen holds no widget is interactive once this module has run.
  const nearAtLoad = await Promise.all(widgets.map((w) => w.firstScreen ?? true));
  await Promise.all(widgets.filter((_, i) => nearAtLoad[i]).map((w) => w.ready ?? null));
  document.documentElement.dataset.firstScreenReadyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.firstScreenWidgets = String(nearAtLoad.filter(Boolean).length);
  await Promise.all(widgets.map((w) => w.ready ?? null));
  const stray = unclaimedParams();
  if (stray.length) showPageNotice(`Ignored URL parameters that match no figure on this page: ${stray.slice(0, 5).join(', ')}${stray.length > 5 ? ', …' : ''}.`);
  // Time to interactive: every widget on the page has its controls wired to the engine.
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.ready = 'true';
}

main();
