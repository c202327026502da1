// A widget's fields, declared once. Each widget class lists its fields in `static fields`; the attributes it
// observes, its URL keys and getState/setState keys (web/state.js), its controls, the engine arguments, the
// engine-error mapping and the defaults note all follow from that one table (kit/element.js reads it).
//
// A field: {
//   name        the state key: the URL parameter `<key>.<name>`, getState()'s key and the control's name
//   attribute   the host attribute (default: the name with "-" for "_")
//   kind        'number' (text read as a number), 'select', 'check' (a checkbox: "true"/"false") or 'text'
//   label       the control's label; `help` (text, or (widget) => text: the tooltip), `percent` and `range` go to
//               the control and parseNumber; `doc` (widget) => the contract's doc (declaredField), the line the
//               control shows when folded behind "More settings" (kit/disclosure.js, kit/taught.js)
//   options     a select's [{value, label, title?}], or (widget) => that list when it comes from the presets
//   fallback    the starting text without an attribute, or (widget) => that text
//   check       (text, widget) => true or why not, like state.js's validators (default: by kind; a select
//               accepts its options' values)
//   arg         the engine argument it feeds; `toArg(value, values)` converts the parsed value (undefined: not
//               sent), `optional` leaves it out at its fallback, `sendWhen(values)` false reads the field (its
//               errors show) but sends nothing, `activeWhen(values)` false leaves it unread (hidden in this mode)
//   engineDefault  (engine result) => the engine's own choice, for the defaults note (noteEngineDefaults)
//   why         where the fallback differs from the engine's choice, why the widget starts elsewhere (in that note)
//   stateWhen   (values) => whether the field is part of the state now (a pasted config only with the custom model)
//   embed       false, or (values) => false: left out of embed snippets (embedAttributes)
// }
import { isNumberText, isBoolText, oneOf } from '../../state.js';
import { numberField, selectField, checkboxField, parseNumber } from './fields.js';

/**
 * A select over the widget's presets (`list`: 'models' or 'hardware') that starts on `preferred` when the list has
 * it, else on the first; `extra` adds to or overrides the field (its arg, the option labels).
 */
export function presetSelect(name, label, list, preferred, extra = {}) {
  return {
    name,
    kind: 'select',
    label,
    options: (w) => w[list].map((p) => ({ value: p.id, label: p.name })),
    fallback: (w) => w[list].find((p) => p.id === preferred)?.id ?? w[list][0]?.id ?? '',
    ...extra,
  };
}

/** The host attribute of a field. */
export function fieldAttribute(field) {
  return field.attribute ?? field.name.replace(/_/g, '-');
}

/** A field's options, its fallback text or any other entry that may depend on the widget (its presets). */
function resolve(entry, widget) {
  return typeof entry === 'function' ? entry(widget) : entry;
}

/** The fields' attributes, in table order (a widget's observedAttributes). */
export function fieldAttributes(fields) {
  return fields.map(fieldAttribute);
}

/** The field whose attribute is `attribute` (undefined for none). */
export function fieldOfAttribute(fields, attribute) {
  return fields.find((f) => fieldAttribute(f) === attribute);
}

/** declareState's entries {name, attribute, check, fallback} for `widget`, its presets loaded. */
export function stateEntries(fields, widget) {
  return fields.map((f) => ({
    name: f.name,
    attribute: fieldAttribute(f),
    // A state.js validator is kept as it is (url-state tests read its `allowed` and `kind`).
    check: !f.check ? defaultCheck(f, widget) : f.check.length > 1 ? (text) => f.check(text, widget) : f.check,
    fallback: resolve(f.fallback, widget),
  }));
}

function defaultCheck(field, widget) {
  if (field.kind === 'number') return isNumberText;
  if (field.kind === 'check') return isBoolText;
  if (field.kind === 'select') return oneOf(resolve(field.options, widget).map((o) => String(o.value)));
  throw new Error(`field ${field.name}: a ${field.kind ?? 'field without a kind'} needs a check`);
}

/** The control of field `name` (label, options from the table) showing `value`. */
export function fieldControl(fields, name, value, widget) {
  const f = fields.find((field) => field.name === name);
  if (!f) throw new Error(`no field ${name}`);
  const help = resolve(f.help, widget);
  if (f.kind === 'number') return numberField({ name, label: f.label, value, help });
  if (f.kind === 'text') return numberField({ name, label: f.label, value, help, inputmode: 'text' });
  if (f.kind === 'select') return selectField({ name, label: f.label, options: resolve(f.options, widget), value });
  if (f.kind === 'check') return checkboxField({ name, label: f.label, checked: value === 'true', help });
  throw new Error(`field ${name}: a ${f.kind} control is the widget's own`);
}

/** The state texts shown by `root`'s controls, in table order; fields whose stateWhen says no are left out. */
export function readFields(fields, root) {
  const values = {};
  for (const f of fields) {
    const control = root.querySelector(`[name="${f.name}"]`);
    if (control) values[f.name] = control.type === 'checkbox' ? String(control.checked) : control.value;
  }
  for (const f of fields) if (f.stateWhen && !f.stateWhen(values)) delete values[f.name];
  return values;
}

/** Sets `root`'s controls from state texts (a checkbox from "true"/"false"). */
export function writeFields(root, values) {
  for (const [name, value] of Object.entries(values)) {
    const control = root.querySelector(`[name="${name}"]`);
    if (!control) continue;
    if (control.type === 'checkbox') control.checked = value === 'true';
    else control.value = value;
  }
}

/**
 * The engine arguments of `values` (state texts), in table order: {args, errors}. Number fields are read with
 * parseNumber (each unreadable one adds its TallyError naming the field), checkboxes become booleans.
 */
export function fieldArgs(fields, values) {
  const args = {};
  const errors = [];
  for (const f of fields) {
    if (!f.arg || !(f.name in values) || (f.activeWhen && !f.activeWhen(values))) continue;
    let value = values[f.name];
    if (f.kind === 'number') {
      try {
        value = parseNumber(value, f.name, f.label, f);
      } catch (error) {
        errors.push(error);
        continue;
      }
      // Optional settings at their default are not sent (the engine's default is the same).
      if (f.optional && value === Number(f.fallback)) continue;
    } else if (f.kind === 'check') value = value === 'true';
    if (f.sendWhen && !f.sendWhen(values)) continue;
    if (f.toArg) value = f.toArg(value, values);
    if (value !== undefined) args[f.arg] = value;
  }
  return { args, errors };
}

/** Engine argument -> field, for errors the engine names by its argument. */
export function argFields(fields) {
  return Object.fromEntries(fields.filter((f) => f.arg).map((f) => [f.arg, f.name]));
}

/** The defaults note's entries [{field, arg, engine, why}] (kit/element.js noteEngineDefaults). */
export function engineDefaultFields(fields) {
  return fields
    .filter((f) => f.engineDefault)
    .map((f) => ({ field: f.name, arg: f.arg, engine: f.engineDefault, why: f.why }));
}

/** Attributes that reproduce `values` in an embed snippet ({attribute: text}), fields with embed: false left out. */
export function embedFields(fields, values) {
  const out = {};
  for (const f of fields) {
    const embed = typeof f.embed === 'function' ? f.embed(values) : f.embed !== false;
    if (embed && f.name in values) out[fieldAttribute(f)] = values[f.name];
  }
  return out;
}
