// TallyWidget, the base class of every widget (shadow root, declared state, URL state, the element API, notices,
// warnings, chart widths, mounting), and defineWidget/widgetTags, the registry of tally's elements.
import { revealFolded } from './disclosure.js';
import { getEngine, TallyError } from '../../engine.js';
import { MAX_VALUE_LENGTH } from '../../state.js';
import { attachShare } from './share.js';
import { baseCss } from './styles.js';
import { THEMES, applyThemeSoon, hostTheme, themedWidgets, watchHostTheme } from './theme.js';
import { clearErrors, showError, showErrorNow } from './fields.js';
import { mountSchedule } from './mount.js';
import { literalDefault } from './contract.js';
import {
  QUOTE_CHARS,
  claimUrlKey,
  claimIdKey,
  keepsUrlState,
  readUrlState,
  saveUrlState,
  settleUrlState,
  overrideReason,
  showUrlRejections,
  setUrlNotice,
  watchUrlRefusals,
} from './url-state.js';
import {
  fieldAttributes,
  fieldOfAttribute,
  stateEntries,
  readFields,
  writeFields,
  fieldArgs,
  argFields,
  embedFields,
  engineDefaultFields,
} from './store.js';

/** Marks tally's widget classes, so a second copy of the script recognises the first one's elements. */
const TALLY_WIDGET = Symbol.for('tally.widget');
/** Tags of the TallyWidget classes this copy registered: each has a Share control, so embed.html serves each. */
const registeredWidgets = new Set();

/** The tags (`tally-compute`, …) of every registered TallyWidget, in registration order. */
export function widgetTags() {
  return [...registeredWidgets];
}

/**
 * Registers a tally element class as `<name>`. A name the host page already uses is left alone with a console
 * warning (throwing would stop every widget module evaluated after this one); a tally widget already registered
 * by another copy of the script (a second origin or URL) is kept silently. Returns true when `cls` was defined.
 */
export function defineWidget(name, cls) {
  cls[TALLY_WIDGET] = true;
  // On a server (a static-site generator's pre-render) there is no registry: importing defines nothing.
  if (typeof customElements === 'undefined') return false;
  const existing = customElements.get(name);
  if (existing === cls) return true;
  if (existing) {
    if (!existing[TALLY_WIDGET])
      console.warn(
        `tally: <${name}> is already defined by this page, so tally's ${name} widget is not available here; the other tally widgets work.`,
      );
    return false;
  }
  try {
    customElements.define(name, cls);
    if (cls.prototype instanceof TallyWidget) registeredWidgets.add(name);
    return true;
  } catch (error) {
    console.warn(`tally: could not define <${name}> (${error.message}); the other tally widgets work.`);
    return false;
  }
}

/** Shadow parts every widget exposes for ::part() styling (docs/EMBEDDING.md), by selector. */
const PARTS = [
  ['.widget', 'panel'],
  ['.fields, .top', 'fields'],
  ['.field', 'field'],
  ['.field label', 'label'],
  ['.field input, .field select, .field textarea', 'control'],
  ['.field .error', 'error'],
  ['.results', 'results'],
  ['.result', 'result'],
  ['.result .label', 'result-label'],
  ['.result .value', 'value'],
  ['.notice', 'notice'],
  ['.url-notice', 'url-notice'],
  ['.warnings', 'warnings'],
  ['svg.chart, svg.timeline', 'chart'],
  ['table', 'table'],
  ['.toolbar', 'toolbar'],
  ['button', 'button'],
  ['.status', 'status'],
];

/** What to add to a page that refused tally's markup (Trusted Types without the policy 'tally'). */
function trustedTypesHint(error) {
  return /TrustedHTML|Trusted ?Types/i.test(String(error?.message))
    ? ". This page requires Trusted Types: allow the policy 'tally' in its trusted-types directive (docs/EMBEDDING.md)"
    : '';
}

/**
 * Base class: a shadow root, the shared engine, declared state (attributes, URL, rejection notices), warnings,
 * chart widths, and the element API every widget shares (docs/EMBEDDING.md): getState(), setState(state),
 * `ready`, a `change` event whose detail is the state, attributes that set state, ::part names, --tally-* properties.
 */
/** HTMLElement, or a plain class where there is none (server-side rendering), so the modules import anywhere. */
export const ElementBase = globalThis.HTMLElement ?? class {};

export class TallyWidget extends ElementBase {
  /** Registers the widget as `<name>` (see defineWidget). */
  static define(name) {
    return defineWidget(name, this);
  }

  /** Attributes every widget takes about its host page, not its state (docs/EMBEDDING.md, "On a host page"). */
  static hostAttributes = ['theme', 'compact', 'url-state', 'eager'];
  /** The values a host attribute takes, for the package's types (scripts/build/pack-widgets.mjs); others are free text. */
  static hostAttributeOptions = { theme: THEMES, 'url-state': ['', 'on', 'off', 'true', 'false'] };

  /** The attributes of the widget's state fields (its `static fields` table, kit/store.js), in table order. */
  static get stateAttributes() {
    return fieldAttributes(this.fields ?? []);
  }

  /** Attributes that set state after start-up too (the state fields' attributes), and `theme`. */
  static get observedAttributes() {
    return [...this.stateAttributes, 'theme'];
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    /** Resolves once the widget has built its DOM and shown its first result (tests and the page wait on it). */
    this.ready = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
    /** The last successful engine call, {method, args, result} (see recordCall); null before one. */
    this.lastCall = null;
    // The field the reader is typing in during this input event (errors about it wait, see showError).
    this.typingField = null;
    this.heldErrors = new Map();
    this.shadowRoot.addEventListener(
      'input',
      (event) => {
        const target = event.target;
        if (!target.matches?.('input:not([type="checkbox"]), textarea')) return;
        this.typingField = target.name;
        setTimeout(() => {
          if (this.typingField === target.name) this.typingField = null;
        });
      },
      true,
    );
    // Keys typed into the widget's controls are the reader's: a host's shortcuts (a slide deck's arrows, Space,
    // "." and "b") never see them. Focus still moves with Tab, which is the browser's default action.
    for (const type of ['keydown', 'keyup', 'keypress'])
      this.shadowRoot.addEventListener(type, (event) => {
        if (event.target.closest?.('input, select, textarea, button, summary, [tabindex]')) event.stopPropagation();
      });
    // Leaving the field (or pressing Enter) shows what was held back at once.
    this.shadowRoot.addEventListener(
      'change',
      () => {
        this.typingField = null;
        this.showHeldErrors();
      },
      true,
    );
  }

  // ------------------------------------------------------------------------------------ declared state
  /** The engine's presets (models, hardware), or empty lists when the engine refuses: the widget then
   *  still renders and its next engine call shows the error. The page asks the engine for them once. */
  loadPresets() {
    try {
      return this.engine.call('presets', {});
    } catch {
      return { models: [], hardware: [] };
    }
  }

  /**
   * Declares the widget's state fields (by default its `static fields` table, resolved against its presets; or
   * entries [{name, check, fallback, attribute?}]) and returns the starting values: each valid attribute, else its
   * fallback, with the URL's values on top. URL values that fail their check wait in this.urlRejections for
   * settleUrlState(); an invalid attribute falls back with a console warning.
   */
  declareState(short, fields = stateEntries(this.constructor.fields, this)) {
    claimUrlKey(this, short);
    this.stateFields = fields;
    this.stateSchema = Object.fromEntries(fields.map((f) => [f.name, f.check]));
    const start = {};
    for (const f of fields) {
      const attribute = f.attribute ?? f.name.replace(/_/g, '-');
      const text = this.getAttribute(attribute);
      const verdict = text === null ? null : f.check(text);
      start[f.name] = verdict === true ? text : f.fallback;
      if (text !== null && verdict !== true)
        console.warn(
          `tally: <${this.localName}> ignored ${attribute}="${text.slice(0, QUOTE_CHARS)}" (${verdict || 'not an accepted value'})`,
        );
    }
    this.defaults = { ...start };
    this.fallbacks = Object.fromEntries(fields.map((f) => [f.name, f.fallback]));
    return Object.assign(start, readUrlState(this));
  }

  /** Reconciles the URL's values with what the first update() showed (kit/url-state.js settleUrlState). */
  settleUrlState() {
    settleUrlState(this);
    revealFolded(this); // a folded control the URL set shows (kit/disclosure.js)
  }

  /** Why a URL value another setting replaced does not show (widgets with linked fields say which setting). */
  urlOverrideReason(field, state) {
    return overrideReason(field, state);
  }

  /** Puts one field back to its starting value (subclasses with linked fields override). */
  revertField(field) {
    this.applyState({ [field]: this.defaults[field] });
  }

  /** Whether this widget reads and writes the page URL (kit/url-state.js keepsUrlState). */
  get keepsUrlState() {
    return keepsUrlState(this);
  }

  /** Writes the state to the URL (the widget calls it after each reader edit), where URL state is on. */
  saveState() {
    saveUrlState(this);
  }

  // ------------------------------------------------------------------------------------ element API
  /** The widget's state: the same fields and texts the URL holds (null until `ready`). */
  getState() {
    return this.mounted ? { ...this.values() } : null;
  }

  /**
   * Sets some or all state fields ({field: text | number | boolean}) as the URL would: each field is checked
   * like a URL value and then by the engine. Nothing changes if any field is refused; the error is a TallyError
   * whose `field` names the field. Returns the new state. Does not fire `change` (only reader edits do).
   */
  setState(state) {
    if (!this.mounted) throw new Error(`<${this.localName}> is not ready: await element.ready before setState()`);
    if (!state || typeof state !== 'object' || Array.isArray(state))
      throw new TallyError('', 'setState takes an object such as {"gpus": "8"}');
    const changes = {};
    for (const [field, raw] of Object.entries(state)) {
      if (!Object.hasOwn(this.stateSchema, field))
        throw new TallyError(
          field,
          `${field}: this widget has no such setting (it has ${Object.keys(this.stateSchema).join(', ')})`,
        );
      if (!['string', 'number', 'boolean'].includes(typeof raw))
        throw new TallyError(field, `${field} must be text, a number or a boolean`);
      const text = String(raw);
      const verdict =
        text.length > MAX_VALUE_LENGTH ? `longer than ${MAX_VALUE_LENGTH} characters` : this.stateSchema[field](text);
      if (verdict !== true)
        throw new TallyError(
          field,
          `${field}: ${typeof verdict === 'string' ? verdict : 'not an accepted value'}, got "${text.slice(0, QUOTE_CHARS)}"`,
        );
      changes[field] = text;
    }
    const before = this.values();
    this.applyState(changes);
    this.update();
    if (this.lastError && Object.hasOwn(changes, this.lastError.field)) {
      const { field, message } = this.lastError;
      this.applyState(before);
      this.update();
      throw new TallyError(field, message.startsWith(field) ? message : `${field}: ${message}`);
    }
    this.saveState();
    this.announced = JSON.stringify(this.values());
    return this.getState();
  }

  /** Fires `change` (detail: the state) when a reader edit changed the state since the last one. */
  announceState() {
    if (!this.mounted) return;
    const state = this.values();
    const text = JSON.stringify(state);
    if (text === this.announced) return;
    this.announced = text;
    this.dispatchEvent(new CustomEvent('change', { detail: { ...state }, bubbles: true, composed: true }));
  }

  /**
   * The `defaults-note` line naming each default of this widget that differs from the engine's, so the widget and
   * `tally call <method>` with the same attributes agree or the reader is told why not. `fields` lists
   * [{field, arg, engine: (result) => value}] for the fields the page left at the widget's default. A default the
   * contract declares as a plain literal is read from the declaration (kit/contract.js), with no engine call; only
   * the others (computed, "depends: ...") are asked of the engine, without their args (as `tally call` with only
   * the page's attributes), once per distinct set of arguments; where it refuses that, each field is asked alone.
   */
  noteEngineDefaults(method, args, fields) {
    const unset = fields.filter(({ field, arg }) => {
      const attribute = this.stateFields?.find((f) => f.name === field)?.attribute ?? field.replace(/_/g, '-');
      return arg in args && !this.hasAttribute(attribute) && this.values()[field] === this.fallbacks?.[field];
    });
    const declared = new Map(unset.map((f) => [f.field, literalDefault(this.engine, method, f.arg)]));
    const computed = unset.filter((f) => declared.get(f.field) === undefined);
    this.defaultAnswers ??= new Map();
    const ask = (omit) => {
      const rest = { ...args };
      for (const { arg } of omit) delete rest[arg];
      const key = JSON.stringify([method, rest]);
      if (!this.defaultAnswers.has(key)) {
        let answer = null; // refused without these: no choice of the engine's to compare
        try {
          answer = this.engine.call(method, rest);
        } catch {
          /* answer stays null */
        }
        if (this.defaultAnswers.size > 16) this.defaultAnswers.clear();
        this.defaultAnswers.set(key, answer);
      }
      return this.defaultAnswers.get(key);
    };
    // Asked as `tally call` with the page's attributes alone: without every arg the page left to the widget.
    const together = computed.length ? ask(unset) : null;
    const differ = [];
    for (const f of unset) {
      let theirs = declared.get(f.field);
      if (theirs === undefined) {
        const answer = together ?? ask([f]);
        theirs = answer === null ? undefined : f.engine(answer);
      }
      if (theirs !== undefined && String(theirs) !== String(args[f.arg]))
        differ.push(`${f.field} is ${args[f.arg]} here, ${theirs} in the engine${f.why ? ` (${f.why})` : ''}`);
    }
    const root = this.shadowRoot;
    let box = root.querySelector('.defaults-note');
    if (!box && !differ.length) return;
    if (!box) {
      box = document.createElement('p');
      box.className = 'defaults-note';
      box.part.add('defaults-note');
      (root.querySelector('.notice') ?? root.querySelector('.fields'))?.after(box);
    }
    box.textContent = differ.length
      ? `Defaults that differ from \`tally call ${method}\` with the same attributes: ${differ.join('; ')} (set the attribute to choose).`
      : '';
  }

  /** Sets data-tally-theme (which the shared styles key on) to `theme`, by default the one hostTheme resolves now. */
  applyTheme(theme = hostTheme(this)) {
    if (this.dataset.tallyTheme !== theme) this.dataset.tallyTheme = theme;
    if (this.mounted) this.hostAttributeNotices();
  }

  /** A host attribute outside its values is named, with the values, in the widget's notice line (and the console). */
  hostAttributeNotices() {
    for (const [name, allowed] of Object.entries(TallyWidget.hostAttributeOptions)) {
      const text = this.getAttribute(name);
      const bad = text !== null && !allowed.includes(text.trim().toLowerCase());
      const message = bad
        ? `Ignored attribute ${name}="${text.slice(0, QUOTE_CHARS)}": not one of ${allowed.map((v) => v || '(empty)').join(', ')}.`
        : null;
      if (bad && this.urlNotices?.get(`attribute:${name}`)?.text !== message)
        console.warn(`tally: <${this.localName}> ${message}`);
      this.setUrlNotice(`attribute:${name}`, message);
    }
  }

  disconnectedCallback() {
    themedWidgets.delete(this);
  }

  attributeChangedCallback(name, oldValue, value) {
    if (name === 'theme') {
      if (this.isConnected) this.applyTheme();
      return;
    }
    if (!this.mounted || oldValue === value || value === null) return;
    const field = fieldOfAttribute(this.constructor.fields ?? [], name)?.name ?? name.replace(/-/g, '_');
    try {
      this.setState({ [field]: value });
      this.setUrlNotice(`attribute:${name}`, null);
    } catch (error) {
      if (!(error instanceof TallyError)) throw error;
      this.setUrlNotice(
        `attribute:${name}`,
        `Ignored attribute ${name}="${value.slice(0, QUOTE_CHARS)}": ${error.message}.`,
      );
    }
  }

  // ------------------------------------------------------------------------------------ shared plumbing
  /**
   * Calls `handler(control, event)` once per reader edit: text fields on `input`, selects and checkboxes on
   * `change` (they fire both events for one edit, which would otherwise ask the engine twice).
   */
  onControlEdit(handler) {
    const root = this.shadowRoot;
    const isText = (el) => el.matches?.('textarea, input:not([type="checkbox"]):not([type="radio"])');
    root.addEventListener('input', (event) => {
      if (event.target.name && isText(event.target)) handler(event.target, event);
    });
    root.addEventListener('change', (event) => {
      if (event.target.name && !isText(event.target)) handler(event.target, event);
    });
  }

  /**
   * The edit -> update -> save cycle: on every reader edit (onControlEdit), onEdit(name) keeps the fields linked to
   * the edited one in step, then update() shows the new result and saveState() writes it to the URL.
   */
  updateOnEdit() {
    this.onControlEdit((control) => {
      this.onEdit(control.name);
      this.update();
      this.saveState();
    });
  }

  /** Keeps the fields that follow the edited one (`name`) in step before update() (widgets with linked fields). */
  onEdit() {}

  /** The end of build(): the first update(), then the URL's values reconciled with what it showed. */
  firstUpdate() {
    this.update();
    this.settleUrlState();
  }

  /** Redraws the chart slot [data-out="chart"] as drawChart(...this.chartArgs) whenever its shown width changes. */
  observeChartWidth() {
    this.observeWidth(
      this.shadowRoot.querySelector('[data-out="chart"]'),
      () => this.chartArgs && this.drawChart(...this.chartArgs),
    );
  }

  /**
   * Shows each unreadable field's error (fieldArgs's `errors`) beside its field, the first as this.lastError;
   * returns whether there was any.
   */
  showFieldErrors(errors) {
    for (const error of errors) showError(this.shadowRoot, error.field, error.message);
    if (errors.length) this.lastError = { field: errors[0].field, message: errors[0].message };
    revealFolded(this);
    return errors.length > 0;
  }

  /**
   * The engine's answer to `method` with `args`, recorded as lastCall; null once a refusal is shown beside its
   * field (showEngineError, with `argToField`).
   */
  callEngine(method, args, argToField = this.argToField) {
    let result;
    try {
      result = this.engine.call(method, args);
    } catch (error) {
      this.showEngineError(error, argToField);
      return null;
    }
    this.recordCall(method, args, result);
    return result;
  }

  /**
   * The one path from an engine error to the screen: a TallyError is shown beside its field (engine argument
   * names mapped by `argToField`, {arg: field} or (arg) => field), recorded as this.lastError and returned;
   * anything else is rethrown.
   */
  showEngineError(error, argToField = {}) {
    if (!(error instanceof TallyError)) throw error;
    const field = (typeof argToField === 'function' ? argToField(error.field) : argToField[error.field]) ?? error.field;
    showError(this.shadowRoot, field, error.message);
    this.lastError = { field, message: error.message };
    revealFolded(this);
    this.showWarnings([]);
    return this.lastError;
  }

  /**
   * Shows a result's `warnings` ([{field, message}]: legal but implausible input, e.g. an MFU above any
   * published run) in a status line the reader and screen readers get; an empty list clears it.
   */
  showWarnings(warnings) {
    const root = this.shadowRoot;
    let box = root.querySelector('.warnings');
    const list = (Array.isArray(warnings) ? warnings : []).filter((w) => w && w.message);
    if (!box) {
      if (!list.length) return;
      box = document.createElement('div');
      box.className = 'warnings';
      box.part.add('warnings');
      box.setAttribute('role', 'status');
      const anchor = root.querySelector('.notice');
      if (anchor) anchor.after(box);
      else (root.querySelector('.widget') ?? root).append(box);
    }
    box.replaceChildren(
      ...list.map((w) => {
        const line = document.createElement('p');
        line.textContent = `Warning: ${w.message}`; // textContent only: engine text never becomes markup
        if (w.field) line.dataset.field = w.field;
        return line;
      }),
    );
    if (list.length) this.dataset.warnings = String(list.length);
    else delete this.dataset.warnings;
  }

  /**
   * Redraws with `redraw()` whenever `element`'s shown width changes (rotation, window resize); shownWidth()
   * gives the last width. A ResizeObserver reports after layout, so drawing never forces a page layout.
   */
  observeWidth(element, redraw) {
    if (typeof ResizeObserver !== 'function') return;
    this.observed ??= new Map();
    if (this.observed.has(element)) return;
    this.resizeObserver ??= new ResizeObserver((entries) => {
      for (const entry of entries) {
        const watched = this.observed.get(entry.target);
        const now = Math.round(entry.contentRect.width);
        if (!watched || !now || Math.abs(now - (watched.width ?? 0)) < 2) continue;
        watched.width = now;
        requestAnimationFrame(() => watched.redraw());
      }
    });
    this.observed.set(element, { width: null, redraw });
    this.resizeObserver.observe(element);
  }

  /** The width `element` was last shown at in CSS px (undefined before its first layout). */
  shownWidth(element) {
    return this.observed?.get(element)?.width ?? undefined;
  }

  /** Adds the documented part names to the widget's elements (after mount; see PARTS). */
  applyParts() {
    for (const [selector, part] of PARTS)
      for (const el of this.shadowRoot.querySelectorAll(selector)) el.part.add(part);
  }

  holdError(field, message, delayMs) {
    this.heldErrors.set(field, message);
    clearTimeout(this.heldTimer);
    if (delayMs !== null) this.heldTimer = setTimeout(() => this.showHeldErrors(), delayMs);
    this.dataset.heldErrors = String(this.heldErrors.size);
  }

  showHeldErrors() {
    clearTimeout(this.heldTimer);
    for (const [field, message] of this.heldErrors) showErrorNow(this.shadowRoot, field, message);
    this.dropHeldErrors();
  }

  dropHeldErrors() {
    clearTimeout(this.heldTimer);
    this.heldErrors.clear();
    delete this.dataset.heldErrors;
  }

  async connectedCallback() {
    themedWidgets.add(this);
    watchHostTheme();
    applyThemeSoon(this);
    if (this.engine || this.scheduled) return;
    this.showBox('Loading the engine…');
    claimIdKey(this); // in document order, before widgets mount in viewport order
    const { firstScreen, due, now } = mountSchedule(this);
    this.scheduled = true;
    this.startNow = now;
    /** Resolves true when the widget was near the viewport at load (it mounts at once), false when it waits. */
    this.firstScreen = firstScreen;
    // `eager`, or mount() called before the element was connected: no waiting for the viewport.
    if (this.hasAttribute('eager') || this.mountRequested) now();
    this.dataset.tallyMount = 'waiting';
    await due;
    this.dataset.tallyMount = 'loading';
    try {
      this.engine = await getEngine();
    } catch (error) {
      this.showBox(`The engine could not load: ${error.message}`, true);
      this.dataset.tallyMount = 'failed';
      this.resolveReady();
      return;
    }
    try {
      this.build();
      // Share / embed is an extra: where it cannot be built (a host's odd URLs), the figure still shows.
      try {
        attachShare(this);
      } catch (error) {
        console.warn(
          `tally: <${this.localName}>'s Share / embed control could not be built (${error.message}); the figure works without it.`,
        );
      }
      watchUrlRefusals(this);
      if (typeof this.values === 'function' && this.stateSchema) {
        this.mounted = true;
        this.announced = JSON.stringify(this.values());
        // After the widget's own handlers: a reader edit that changed the state fires `change`.
        for (const type of ['input', 'change', 'click', 'keydown'])
          this.shadowRoot.addEventListener(type, () => queueMicrotask(() => this.announceState()));
      }
      this.hostAttributeNotices();
      this.applyParts();
    } catch (error) {
      // A widget that cannot start says so in its own box; the page around it still becomes ready.
      console.error(error);
      this.showBox(`This figure could not start: ${error.message}${trustedTypesHint(error)}`, true);
    } finally {
      this.dataset.tallyMount = this.mounted ? 'ready' : 'failed';
      this.resolveReady();
    }
  }

  /**
   * Replaces the widget's box with one line of text (loading, or why it cannot start), built without markup: it
   * shows even where the page's Trusted Types refuse tally's policy.
   */
  showBox(text, failed = false) {
    const style = document.createElement('style');
    style.textContent = baseCss;
    const box = document.createElement('div');
    box.className = failed ? 'widget notice' : 'widget';
    if (failed) box.setAttribute('role', 'alert');
    box.textContent = text;
    this.shadowRoot.replaceChildren(style, box);
  }

  /**
   * Starts the widget now instead of when it comes near the viewport (a slide deck, an LMS script, a test); returns
   * `ready`. Called before the element is in the document, it starts as soon as it is connected.
   */
  mount() {
    this.mountRequested = true;
    this.startNow?.();
    return this.ready;
  }

  /** Subclasses build their DOM here (this.engine is ready). */
  build() {}

  /** The start of every update(): the field errors and the last engine error cleared; returns the shadow root. */
  beginUpdate() {
    clearErrors(this.shadowRoot);
    this.lastError = null;
    return this.shadowRoot;
  }

  /** Writes `text` into the result slot [data-out="key"]. */
  showOut(key, text) {
    this.shadowRoot.querySelector(`[data-out="${key}"]`).textContent = text;
  }

  // ------------------------------------------------------------------------------------ the field table
  /** The state as text, read from the controls of the table's fields (kit/store.js readFields). */
  values() {
    return readFields(this.constructor.fields, this.shadowRoot);
  }

  /** Sets controls from state texts (setState, URL reverts); widgets with linked fields add to it. */
  applyState(values) {
    writeFields(this.shadowRoot, values);
  }

  /** Attributes that reproduce the current state in an embed snippet. */
  embedAttributes() {
    return embedFields(this.constructor.fields, this.values());
  }

  /** The engine arguments the table's fields give for `values`: {args, errors} (kit/store.js fieldArgs). */
  fieldArgs(values = this.values()) {
    return fieldArgs(this.constructor.fields, values);
  }

  /** Engine argument -> field, from the table, for errors the engine names by its argument. */
  get argToField() {
    return argFields(this.constructor.fields);
  }

  /** The defaults note's entries of the table's fields that name the engine's own choice. */
  get engineDefaultFields() {
    return engineDefaultFields(this.constructor.fields);
  }

  /**
   * Records the widget's last successful engine call as `lastCall`, {method, args, result}: the one public view
   * of what the widget computed, read by the curves that follow it (web/curves.js) and by tests. A refused call
   * leaves it (and sets `lastError`, {field, message}).
   */
  recordCall(method, args, result) {
    this.lastCall = { method, args, result };
  }

  /** Shows the URL values this widget ignored ([{param, field, reason}]; kit/url-state.js showUrlRejections). */
  showUrlRejections(rejected) {
    showUrlRejections(this, rejected);
  }

  /** Sets (or with `text` null, removes) the URL notice line for `field` (kit/url-state.js setUrlNotice). */
  setUrlNotice(field, text, rejection = false) {
    setUrlNotice(this, field, text, rejection);
  }
}
