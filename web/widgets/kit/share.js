// "Share / embed" under every widget: for the widget's current state, the link, the script-tag snippet, the
// iframe snippet (embed.html) and a Markdown snippet, each with a Copy button. Attached to every TallyWidget by
// web/widgets/kit/element.js; widgets describe their state through embedAttributes() (else their own attributes).
import { flushState, onStateWritten } from '../../state.js';

// Read once into a name: a literal new URL('../../', import.meta.url) is a file a bundler would inline here.
const MODULE_URL = import.meta.url;

/**
 * The folder above widgets/kit/share.js when this module is served as a file of tally's site (http, https, or file: on
 * a page opened from a file), else null. Read by text, never as `new URL(…, base)`: inside a bundle the module's
 * URL is the bundler's (Turbopack gives a path with no scheme, which is no base), and a bundler would take such a
 * call for an asset of its own.
 */
function ownSite() {
  let href;
  try {
    href = String(MODULE_URL);
  } catch {
    return null;
  }
  const folder = /^(?:https?|file):\/\/[^?#]*\/(?=widgets\/kit\/share\.js(?:[?#]|$))/.exec(href)?.[0];
  if (!folder) return null;
  if (folder.startsWith('file:') && globalThis.location?.protocol !== 'file:') return null;
  try {
    return new URL(folder);
  } catch {
    return null;
  }
}

/**
 * Where tally is served, for the snippets: `site`, the folder of tally-widgets.js and embed.html (a URL, or null
 * where there is none to link: inside an author's bundle, whose files are renamed, or under the classic script),
 * and `script`, the tag that loads the widgets ('' in a bundle). The host page may name the site itself with
 * <meta name="tally-site" content="https://…/">.
 */
function tallyHome() {
  const named = globalThis.document?.querySelector('meta[name="tally-site"]')?.content;
  const classic = globalThis.tallyClassicScript;
  let site = classic ? null : ownSite();
  if (named)
    try {
      site = new URL(named, location.href);
    } catch {
      console.warn(`tally: <meta name="tally-site" content="${named}"> is not a URL; it is ignored`);
    }
  const script = classic
    ? `<script src="${escapeAttribute(classic)}"></script>`
    : site
      ? `<script type="module" src="${new URL('tally-widgets.js', site).href}"></script>`
      : '';
  return { site, script, local: (site?.href ?? classic ?? '').startsWith('file:') };
}

/** Frame height (px) an iframe snippet starts with: the widget's own height plus the frame's padding, within these. */
const FRAME_MIN_PX = 320;
const FRAME_MAX_PX = 900;

const css = `
.share { margin-top: 10px; font-size: 13px; }
.share summary { cursor: pointer; color: var(--accent); font-size: 14px; }
.share-body { display: grid; gap: 8px; margin-top: 6px; }
.share-row { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 2px 8px; align-items: end; }
.share-row[hidden] { display: none; }
.share-row label { grid-column: 1 / -1; color: var(--muted); font-size: 13px; }
.share-row textarea { font: 12px/1.4 ui-monospace, monospace; width: 100%; box-sizing: border-box; resize: vertical; padding: 4px 6px;
  border: 1px solid var(--border); border-radius: 4px; background: var(--bg); color: var(--fg); }
.share-status { color: var(--muted); margin: 0; min-height: 1.2em; }
`;

const ROWS = [
  { kind: 'url', label: 'Link to this state' },
  { kind: 'script', label: 'HTML (one script tag, then the widget)' },
  { kind: 'iframe', label: 'iframe (for pages that allow no scripts)' },
  { kind: 'markdown', label: 'Markdown (for renderers that allow HTML)' },
];

const escapeAttribute = (text) => String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function attributesOf(widget) {
  if (typeof widget.embedAttributes === 'function') return widget.embedAttributes();
  return Object.fromEntries([...widget.attributes].filter((a) => a.name !== 'id').map((a) => [a.name, a.value]));
}

/** The four snippets for `widget` as the page URL has it now: {url, script, iframe, markdown}. */
export function shareSnippets(widget) {
  const attributes = attributesOf(widget);
  const tag = widget.localName;
  const attributeText = Object.entries(attributes)
    .map(([k, v]) => ` ${k}="${escapeAttribute(v)}"`)
    .join('');
  const { site, script } = tallyHome();
  const lead = script ? `${script}\n` : '';
  if (!site)
    return {
      url: '',
      script: `${lead}<${tag}${attributeText}></${tag}>`,
      iframe: '',
      markdown: `${lead && `${lead}\n`}<${tag}${attributeText}>\n</${tag}>`,
    };
  const scriptTag = script;
  const frame = new URL('embed.html', site);
  frame.searchParams.set('widget', tag.replace(/^tally-/, ''));
  for (const [k, v] of Object.entries(attributes)) frame.searchParams.set(k, v);
  // A widget that keeps no URL state (on a host's page) links to embed.html, which shows the same state.
  const link = new URL(widget.keepsUrlState === false ? frame.href : location.href);
  const section = widget.closest('section[id]')?.id;
  if (section && widget.keepsUrlState !== false) link.hash = section;
  const height = Math.round(Math.min(FRAME_MAX_PX, Math.max(FRAME_MIN_PX, widget.getBoundingClientRect().height + 40)));
  const title = widget.shadowRoot?.querySelector('[aria-label]')?.getAttribute('aria-label') ?? tag;
  return {
    url: link.href,
    script: `${scriptTag}\n<${tag}${attributeText}></${tag}>`,
    iframe:
      `<iframe src="${escapeAttribute(frame.href)}" title="${escapeAttribute(title)}" width="100%" height="${height}" style="border:0" loading="lazy"></iframe>\n` +
      `<!-- optional, where the page allows scripts: fits the frame to the widget -->\n<script src="${new URL('embed-resizer.js', site).href}"></script>`,
    // The element on lines of its own, so Markdown keeps it as an HTML block (CommonMark type 7).
    markdown: `${scriptTag}\n\n<${tag}${attributeText}>\n</${tag}>\n\n[Open this figure in tally](${link.href.replace(/\)/g, '%29')})`,
  };
}

async function copy(textarea) {
  textarea.select();
  try {
    await navigator.clipboard.writeText(textarea.value);
    return true;
  } catch {
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

/** Adds the Share / embed control to a widget's shadow root (once). */
export function attachShare(widget) {
  const root = widget.shadowRoot;
  const box = root?.querySelector('.widget');
  if (!box || root.querySelector('details.share')) return;
  const style = document.createElement('style');
  style.textContent = css;
  const details = document.createElement('details');
  details.className = 'share';
  const summary = document.createElement('summary');
  summary.textContent = 'Share / embed';
  const body = document.createElement('div');
  body.className = 'share-body';
  const status = document.createElement('p');
  status.className = 'share-status';
  status.setAttribute('role', 'status');
  const home = tallyHome();
  const areas = {};
  for (const row of ROWS) {
    const wrap = document.createElement('div');
    wrap.className = 'share-row';
    wrap.dataset.kind = row.kind;
    const id = `share-${row.kind}`;
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = row.label;
    const area = document.createElement('textarea');
    area.id = id;
    area.readOnly = true;
    area.rows = row.kind === 'url' ? 2 : 3;
    area.spellcheck = false;
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', `Copy ${row.label.split(' (')[0]}`);
    button.addEventListener('click', async () => {
      status.textContent = (await copy(area))
        ? `${row.label.split(' (')[0]}: copied.`
        : 'Selected: press Ctrl+C (or ⌘C) to copy.';
    });
    wrap.append(label, area, button);
    // In a bundle there is no tally address to link or frame (see tallyHome).
    wrap.hidden = !home.site && (row.kind === 'url' || row.kind === 'iframe');
    areas[row.kind] = area;
    body.append(wrap);
  }
  if (home.local) {
    const note = document.createElement('p');
    note.className = 'share-status';
    note.textContent =
      'This copy is opened from a file: the snippets point at it, so serve the site over http(s) to get embed code others can use.';
    body.append(note);
  }
  if (!home.site) {
    const note = document.createElement('p');
    note.className = 'share-status';
    note.textContent = `${home.script ? 'The classic script loads' : 'This page bundles'} the widgets, so there is no tally page to link or frame: the snippets hold ${home.script ? 'the script and ' : ''}the element. For a link and iframe code, name where tally's site is served: <meta name="tally-site" content="https://…/">.`;
    body.append(note);
  }
  body.append(status);
  details.append(summary, body);
  box.append(style, details);
  const refresh = () => {
    if (!details.open) return;
    const snippets = shareSnippets(widget);
    for (const [kind, area] of Object.entries(areas)) area.value = snippets[kind];
  };
  details.addEventListener('toggle', () => {
    if (details.open) flushState();
    refresh();
  });
  // Open snippets follow the widget: the state is written to the URL shortly after every change.
  onStateWritten(refresh);
}
