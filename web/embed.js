// embed.html: one widget alone, sized for an <iframe>. `?widget=<name>` picks the widget (the tag without
// "tally-"); every other parameter that names one of the widget's declared attributes (its class's
// `stateAttributes` and `configAttributes`) becomes that attribute, exactly as in the script-tag snippet. Nothing
// else from the query reaches the DOM: `onfocus`, `style`, `tabindex` and the like are dropped with a console
// warning, so a crafted link cannot run script even on a host that sends no Content-Security-Policy. The page tells its parent its height by postMessage
// ({type: 'tally-embed-height', height}) so web/embed-resizer.js on the host can fit the iframe to it.
import { getEngine } from './engine.js';

/**
 * Each widget embed.html serves (every TallyWidget: each offers an iframe snippet) and its module, loaded alone so
 * the frame downloads one widget's code. scripts/build/build-site.mjs fails when a widget in web/widgets is missing here.
 */
export const WIDGET_MODULES = {
  collectives: () => import('./widgets/collectives.js'),
  compute: () => import('./widgets/compute.js'),
  float: () => import('./widgets/float.js'),
  inference: () => import('./widgets/inference.js'),
  'memory-budget': () => import('./widgets/memory.js'),
  roofline: () => import('./widgets/roofline.js'),
  step: () => import('./widgets/step.js'),
};
export const EMBEDDABLE = Object.keys(WIDGET_MODULES);
const RESERVED = new Set(['widget', 'id']);
const STATE_PARAM = /^[a-z][a-z0-9-]{0,31}\.[a-z_]{1,32}$/;

/** The attribute names a widget class declares: the only query parameters that may become attributes. */
export function declaredAttributes(widgetClass) {
  // url-state is not one: the frame is tally's own page, whose <meta name="tally-url-state"> keeps it on.
  const host = (widgetClass?.hostAttributes ?? []).filter((name) => name !== 'url-state');
  return new Set([...(widgetClass?.stateAttributes ?? []), ...(widgetClass?.configAttributes ?? []), ...host]);
}

function showError(main, message) {
  const p = document.createElement('p');
  p.className = 'embed-error';
  p.textContent = message; // text only: query text never becomes markup
  main.replaceChildren(p);
}

function postHeight() {
  // The document's full height, so the host can size the iframe to show it without an inner scrollbar.
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (window.parent !== window)
    window.parent.postMessage({ type: 'tally-embed-height', height, href: location.href }, '*');
}

async function main() {
  const root = document.getElementById('embed');
  const params = new URLSearchParams(location.search);
  const name = params.get('widget') ?? '';
  if (!Object.hasOwn(WIDGET_MODULES, name)) {
    showError(
      root,
      `embed.html needs ?widget= one of ${EMBEDDABLE.join(', ')}${name ? ` (got "${name.slice(0, 40)}")` : ''}.`,
    );
    postHeight();
    return;
  }
  // The credit line sits above the widget, in the frame's banner: it paints at once and nothing below the widget
  // moves as the widget grows to its full height.
  const credit = document.createElement('p');
  credit.className = 'embed-credit';
  const link = document.createElement('a');
  link.href = new URL('./', location.href).href;
  link.target = '_blank';
  link.rel = 'noopener';
  link.textContent = 'tally: what it costs to train a language model';
  credit.append('Computed in your browser by ', link);
  document.getElementById('embed-title').after(credit);
  // The widget needs the engine as soon as it mounts: its download starts now, beside the widget's own code (a
  // failure is the widget's to show, in its box).
  getEngine().catch(() => {});
  try {
    await WIDGET_MODULES[name]();
  } catch (error) {
    showError(root, `The ${name} widget could not load: ${error.message}`);
    postHeight();
    return;
  }
  const widget = document.createElement(`tally-${name}`);
  const allowed = declaredAttributes(customElements.get(`tally-${name}`));
  const ignored = [];
  for (const [key, value] of params) {
    if (RESERVED.has(key) || STATE_PARAM.test(key)) continue;
    if (allowed.has(key)) widget.setAttribute(key, value);
    else ignored.push(key);
  }
  if (ignored.length)
    console.warn(
      `embed.html: ignored ${ignored.length} query parameter(s) that are not attributes of <tally-${name}> ` +
        `(${ignored.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}); it takes ${[...allowed].join(', ')}`,
    );
  // The frame's own state key: "w.<field>" parameters in the query reach this widget as on the page.
  widget.id = 'w';
  document.title = `tally: ${name.replace('-', ' ')}`;
  // The frame's one h1, for screen readers only: the widget's own box shows what it is.
  document.getElementById('embed-title').textContent = `tally: the ${name.replace('-', ' ')} widget`;
  // A theme the link names also colours the frame around the widget, so a dark host sees no white margin.
  if (['light', 'dark'].includes(widget.getAttribute('theme')))
    document.documentElement.style.colorScheme = widget.getAttribute('theme');
  root.replaceChildren(widget);
  if (typeof ResizeObserver === 'function') new ResizeObserver(postHeight).observe(document.documentElement);
  widget.ready?.then(() => {
    document.documentElement.dataset.ready = 'true';
    postHeight();
  });
}

main();
