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

// The engine's limits (engine/include/tally/base/input.h: kMaxJsonBytes, kMaxMethodNameBytes), checked here before
// copying, because wasm memory grown for one oversized argument is never given back.
var TALLY_MAX_ARGS_BYTES = 1048576;
var TALLY_MAX_METHOD_BYTES = 64;

/** UTF-8 length of a JS string as TextEncoder would encode it (a lone surrogate becomes 3-byte U+FFFD). */
function tallyUtf8Length(text) {
  var bytes = 0;
  for (var i = 0; i < text.length; i++) {
    var unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      var next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The argument text as bytes, or its byte length alone when it is over the limit (nothing is encoded then). */
function tallyArgsBytes(argsJson) {
  if (argsJson instanceof Uint8Array) return argsJson.length > TALLY_MAX_ARGS_BYTES ? argsJson.length : argsJson;
  var text = String(argsJson);
  // Every UTF-16 unit is at least one UTF-8 byte: a longer string is over the limit without encoding it.
  if (text.length > TALLY_MAX_ARGS_BYTES) return tallyUtf8Length(text);
  var bytes = tallyEncoder.encode(text);
  return bytes.length > TALLY_MAX_ARGS_BYTES ? bytes.length : bytes;
}

/**
 * The method name as bytes; a name over the limit is cut to 65 units, still over it, which the engine rejects
 * quoting only its first 40 bytes: the same message as for the whole name, without copying all of it.
 */
function tallyMethodBytes(method) {
  if (method instanceof Uint8Array)
    return method.length > TALLY_MAX_METHOD_BYTES ? method.subarray(0, TALLY_MAX_METHOD_BYTES + 1) : method;
  var text = String(method);
  return tallyEncoder.encode(text.length > TALLY_MAX_METHOD_BYTES ? text.slice(0, TALLY_MAX_METHOD_BYTES + 1) : text);
}

var tallyStrictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Whether the engine refuses this method name before it reads the arguments (too long, or not UTF-8). */
function tallyMethodRefused(bytes) {
  if (bytes.length > TALLY_MAX_METHOD_BYTES) return true;
  try {
    tallyStrictDecoder.decode(bytes);
    return false;
  } catch (error) {
    return true;
  }
}

Module['tally_call'] = function (method, argsJson) {
  var methodBytes = tallyMethodBytes(method);
  // The engine checks the method name first; a refused name needs no arguments to be refused.
  var args = tallyMethodRefused(methodBytes) ? new Uint8Array(0) : tallyArgsBytes(argsJson);
  if (typeof args === 'number')
    return JSON.stringify({
      // the engine's envelope, key for key (it sorts keys): engine/src/base/input.cpp, parse_json_input
      error: {
        field: 'args',
        message: 'the argument text is ' + args + ' bytes; the limit is ' + TALLY_MAX_ARGS_BYTES + ' bytes (1 MiB)',
      },
      ok: false,
    });
  var m = tallyToHeap(methodBytes);
  var a = tallyToHeap(args);
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
