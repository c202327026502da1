// Appended to tally.js by the wasm link (--post-js): Module.tally_call(method, argsJson) and
// Module.tally_methods() as string-in, string-out functions over the C exports of bindings.cpp.
// Every buffer is freed before returning (inputs here, the reply through tally_free), so calls leak nothing.
// No eval or new Function: the page's CSP needs only 'wasm-unsafe-eval' (README, "Content-Security-Policy").

var tallyEncoder = new TextEncoder();

/**
 * Copies a JS string (as UTF-8) or a Uint8Array (as is: raw bytes, so tests can send invalid UTF-8) into a
 * fresh malloc'd buffer; returns [pointer, byte length] (pointer 0: no memory).
 * TextEncoder turns lone surrogates into U+FFFD; Emscripten 3.1.6's stringToUTF8 would merge one with the
 * next character (eating a closing quote), so the engine would not see the text the caller sent.
 */
function tallyToHeap(text) {
  var bytes = text instanceof Uint8Array ? text : tallyEncoder.encode(String(text));
  var pointer = _malloc(bytes.length + 1);
  if (pointer) HEAPU8.set(bytes, pointer); // HEAPU8 read after malloc: growing memory replaces the view
  return [pointer, bytes.length];
}

/** Reads and frees a reply from the engine. */
function tallyTakeReply(pointer) {
  if (!pointer) return '{"ok":false,"error":{"field":"","message":"the engine ran out of memory for this call"}}';
  try {
    return UTF8ToString(pointer);
  } finally {
    _tally_free(pointer);
  }
}

Module['tally_call'] = function (method, argsJson) {
  var m = tallyToHeap(method);
  var a = tallyToHeap(argsJson);
  try {
    if (!m[0] || !a[0])
      return '{"ok":false,"error":{"field":"args","message":"the input is too large for the engine\'s memory"}}';
    return tallyTakeReply(_tally_call(m[0], m[1], a[0], a[1]));
  } finally {
    if (m[0]) _free(m[0]);
    if (a[0]) _free(a[0]);
  }
};

Module['tally_methods'] = function () {
  return tallyTakeReply(_tally_methods());
};
