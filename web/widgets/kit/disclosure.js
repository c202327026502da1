// Progressive disclosure: a widget shows the controls its chapter has taught and folds the rest behind
// "More settings", each folded control with one line saying what it is and a link to the chapter that teaches it
// (kit/taught.js, the one table of where each control is taught). The page's embed names the shown fields in a
// `controls` attribute (comma-separated field names; not state); without it the widget shows all but its own
// `foldedByDefault` list, as a standalone embed always did. Folded controls stay in the DOM, so the URL, setState
// and attributes set them while folded; one that a link set or that has an error opens the disclosure.
import { escapeHtml } from './format.js';
import { fieldControl } from './store.js';
import { CHAPTERS, TAUGHT } from './taught.js';

/** The disclosure's own styles, added to a widget's CSS by the widgets that fold. */
export const disclosureCss = `
details.more { margin-top: 10px; font-size: 15px; }
details.more > summary { cursor: pointer; font-size: 14px; color: var(--accent); }
details.more > .folded-list { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(250px, 100%), 1fr));
  gap: 12px 16px; margin-top: 8px; }
.folded { display: flex; flex-direction: column; gap: 2px; min-width: 0; }
.folded:has(> .field[hidden]) { display: none; }
.folded > .field.check { padding-top: 0; }
.folded > .taught { margin: 0; font-size: 12px; line-height: 1.35; color: var(--muted); }
.folded > .taught a { color: var(--accent); }
`;

/**
 * The fields shown outside "More settings" among `names`: the `controls` attribute's (unknown names are ignored
 * with a console warning), else every name but `foldedByDefault`.
 */
export function shownFieldNames(widget, names, foldedByDefault = []) {
  const list = widget.getAttribute('controls');
  if (list === null) return new Set(names.filter((n) => !foldedByDefault.includes(n)));
  const asked = list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = asked.filter((n) => !names.includes(n));
  if (unknown.length)
    console.warn(`tally: <${widget.localName}> controls names no such field: ${unknown.join(', ').slice(0, 80)}`);
  return new Set(asked.filter((n) => names.includes(n)));
}

/**
 * Where field `name` of widget `tag` is taught: {chapter (an id or null), number, line}. The line is the table's,
 * else `help` (the field's tooltip: a contract field's declared doc), else `label`. A field the table lacks folds
 * with its label and no link, and a console warning (tests/browser/disclosure.test.mjs holds the table complete).
 */
export function taughtAt(tag, name, help = '', label = name) {
  const entry = TAUGHT[tag]?.[name];
  if (!entry) console.warn(`tally: kit/taught.js has no entry for <${tag}> field ${name}`);
  const chapter = entry?.chapter in CHAPTERS ? entry.chapter : null;
  return { chapter, number: chapter === null ? null : CHAPTERS[chapter], line: entry?.line || help || label };
}

/** Text a line ends with: a sentence, so the link after it reads as its own. */
function sentence(text) {
  const t = String(text).trim();
  // A leading code name (torch.compile, bucket_bytes) keeps its case.
  const code = /^[^\s]*[._][^\s]*/.test(t);
  const capital = code ? t : t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * One folded control: its markup `html` and below it the line, with a link to its chapter where the document has
 * that chapter's element (the explainer page; a standalone embed names the chapter without a dead link). The
 * control's aria-describedby names the line too.
 */
function foldedItem(tag, name, html, help, label) {
  const { chapter, number, line } = taughtAt(tag, name, help, label);
  const id = `f-${name}-taught`;
  const onPage = chapter !== null && globalThis.document?.getElementById?.(chapter);
  const where =
    chapter === null
      ? ''
      : onPage
        ? ` <a href="#${escapeHtml(chapter)}" data-chapter="${escapeHtml(chapter)}">Chapter ${escapeHtml(number)}</a> explains it.`
        : ` Chapter ${escapeHtml(number)} of the explainer explains it.`;
  const described = html.replace(`aria-describedby="f-${name}-error"`, `aria-describedby="f-${name}-error ${id}"`);
  return `<div class="folded" data-folded="${escapeHtml(name)}">${described}<p class="taught" id="${id}" part="taught">${escapeHtml(sentence(line))}${where}</p></div>`;
}

/**
 * [[name, html, help, label]] for `names` of the widget's field table (kit/store.js fieldControl), showing `start`.
 */
export function tableControls(widget, names, start) {
  const fields = widget.constructor.fields;
  return names.map((name) => {
    // A contract field's declared doc, else its tooltip, is the line when kit/taught.js gives none.
    const { doc, help, label } = fields.find((f) => f.name === name) ?? {};
    const text = [doc, help].map((t) => (typeof t === 'function' ? t(widget) : t)).find(Boolean);
    return [name, fieldControl(fields, name, start[name], widget), text, label];
  });
}

/**
 * The markup of a widget's controls split by the disclosure: {shown, more}. `controls` is [[name, html, help?, label?]] in
 * display order; `shown` joins the shown ones' markup, `more` is the "More settings" disclosure (empty when nothing
 * is folded).
 */
export function disclosedControls(widget, controls, foldedByDefault = []) {
  const shown = shownFieldNames(
    widget,
    controls.map(([name]) => name),
    foldedByDefault,
  );
  const tag = widget.localName;
  const folded = controls.filter(([name]) => !shown.has(name));
  return {
    shown: controls
      .filter(([name]) => shown.has(name))
      .map(([, html]) => html)
      .join(''),
    more: folded.length
      ? `<details class="more" data-out="more" part="more"><summary>More settings</summary><div class="folded-list">${folded
          .map(([name, html, help, label]) => foldedItem(tag, name, html, help, label))
          .join('')}</div></details>`
      : '',
  };
}

/**
 * Opens "More settings" when a folded control holds news: an error beside it, or a value the page URL set away
 * from its starting one (`widget.urlFields`, kit/url-state.js). Hidden controls (another mode's) do not count.
 */
export function revealFolded(widget) {
  const more = widget.shadowRoot?.querySelector('details[data-out="more"]');
  if (!more || more.open) return;
  const values = widget.urlFields?.size ? widget.values() : {};
  const news = [...more.querySelectorAll('.field')].some((box) => {
    if (box.hidden) return false;
    const name = box.dataset.field;
    if (box.querySelector('.error')?.textContent) return true;
    return widget.urlFields?.has(name) && values[name] !== widget.defaults?.[name];
  });
  if (news) more.open = true;
}
