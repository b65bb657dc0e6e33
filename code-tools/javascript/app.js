// javascript: run the JavaScript code the model writes, in a fresh engine
// per call.
//
// A toolhost plugin (world `plugin-fs` of wit/plugin.wit), built by
// `toolhost plugin install javascript` with componentize-js (SpiderMonkey
// in StarlingMonkey). The code runs synchronously through `new Function`,
// with its own `console` (captured, not the engine's) and an `fs` object
// over wasi:filesystem: the directories the user granted this tool are its
// preopens, and it reaches nothing else. No network, no timers, no
// environment variables.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

const DESCRIPTION =
  'Run JavaScript (ES2023, synchronous) in a sandbox and return what it prints. Use it to ' +
  'compute, parse and transform data (JSON, CSV, text), check a regular expression or try an ' +
  'algorithm. The result is what console.log printed, then `--- stderr ---` and what ' +
  'console.error and console.warn printed when there is any; an uncaught throw fails the call ' +
  'with its message and stack. Each call starts a fresh engine: no variable or state carries ' +
  'over, so keep state in files in a directory this tool may write. Files: ' +
  'fs.readFile(path) returns a string, fs.writeFile(path, text), fs.readdir(path) returns ' +
  'names; only in the directories listed for this tool, paths relative to the workspace. ' +
  'Synchronous only: no await, promises, timers or fetch; no require or import, no npm ' +
  'packages, no Node or browser APIs beyond the language and its built-ins (JSON, Math, Date, ' +
  'RegExp, typed arrays, TextEncoder; no Intl). The engine is an interpreter, about 8 times ' +
  "slower than Node's JIT for a tight loop, under a compute, time and memory budget per call.";

const SCHEMA = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description: 'A JavaScript program (a function body); console.log what you want to read.',
    },
  },
  required: ['code'],
  additionalProperties: false,
};

// The most output a call keeps before it stops the code: 16 times the
// tool's default output limit (256 KiB), so a print loop ends here and the
// host reports its own limit. Kept small because handing the host a big
// result costs the guest's own fuel; an output limit raised past it gets
// the first 4 MiB and the line saying the code was stopped.
const MAX_OUTPUT = 4 << 20;
const FLOOD = Symbol('output flood');
// The code of the call running, for the text of its syntax error.
let currentCode = '';

export function listTools() {
  return [
    {
      name: 'javascript',
      description: DESCRIPTION,
      inputSchema: JSON.stringify(SCHEMA),
      readOnly: false,
    },
  ];
}

export function callTool(name, input) {
  if (name !== 'javascript') {
    throw { tag: 'invalid-input', val: `no tool \`${name}\`` };
  }
  const { code } = JSON.parse(input);
  currentCode = code;
  // Strings, not arrays of lines: SpiderMonkey appends to a string as a
  // rope, where an array of a million lines costs its collector dearly.
  const printed = { out: '', err: '' };
  let size = 0;
  const writer = (into) => (...values) => {
    const line = values.map(show).join(' ') + '\n';
    size += line.length;
    if (size > MAX_OUTPUT) throw FLOOD;
    printed[into] += line;
  };
  const console = {
    log: writer('out'),
    info: writer('out'),
    debug: writer('out'),
    warn: writer('err'),
    error: writer('err'),
  };
  let failure = null;
  try {
    // Two parameters shadow the engine's own console and give `fs`.
    const run = new Function('console', 'fs', code);
    run(console, fs);
  } catch (e) {
    if (e === FLOOD) {
      printed.err += `\n--- stopped: the code printed more than ${MAX_OUTPUT >> 20} MiB ---\n`;
    } else {
      failure = describe(e);
    }
  }
  const text = result(printed.out, printed.err);
  if (failure !== null) {
    throw { tag: 'failed', val: join(text, failure) };
  }
  return text;
}

/** stdout, then `--- stderr ---` and stderr when there is any. */
function result(stdout, stderr) {
  return stderr === '' ? stdout : join(stdout, '--- stderr ---\n' + stderr);
}

function join(first, second) {
  if (first === '') return second;
  return first + (first.endsWith('\n') ? '' : '\n') + second;
}

/** A printed value, as console.log would show it. */
function show(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return describe(value).trimEnd();
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
    } catch {
      return String(value);
    }
  }
  return typeof value === 'bigint' ? `${value}n` : String(value);
}

/** A thrown value: an Error's name, message and stack, else the value. */
function describe(e) {
  if (e instanceof Error) {
    // SpiderMonkey's frames (`f@app.js line 80 > Function:3:15`), the
    // code's own only, at its own line numbers: `new Function` puts two
    // lines before the body.
    const frames = [];
    for (const line of (e.stack || '').split('\n')) {
      const frame = /^(.*)@.*> Function:(\d+):(\d+)$/.exec(line);
      if (frame === null) continue;
      const where = `<code>:${Number(frame[2]) - 2}:${frame[3]}`;
      const name = frame[1] === '' || frame[1] === 'anonymous' ? '' : frame[1];
      frames.push(name === '' ? `    at ${where}` : `    at ${name} (${where})`);
    }
    let text = `${e.name}: ${e.message}\n` + frames.map((f) => f + '\n').join('');
    if (e instanceof SyntaxError && /\bawait\b/.test(String(currentCode))) {
      text += '(the code runs synchronously: no await, promises or timers)\n';
    }
    return text;
  }
  return `Uncaught ${show(e)}\n`;
}

// Files, through the preopen whose guest path holds the path.
const fs = {
  readFile(path) {
    const [dir, rest] = preopenFor(path);
    const file = wasi(path, 'read', () => dir.openAt({}, rest, {}, { read: true }));
    const chunks = [];
    let offset = 0n;
    for (;;) {
      const [chunk, end] = wasi(path, 'read', () => file.read(65536n, offset));
      chunks.push(chunk);
      offset += BigInt(chunk.length);
      if (end || chunk.length === 0) break;
    }
    const bytes = new Uint8Array(Number(offset));
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    return new TextDecoder('utf-8').decode(bytes);
  },
  writeFile(path, text) {
    const [dir, rest] = preopenFor(path);
    const file = wasi(path, 'write', () =>
      dir.openAt({}, rest, { create: true, truncate: true }, { write: true }),
    );
    const bytes = new TextEncoder().encode(String(text));
    let offset = 0;
    while (offset < bytes.length) {
      const chunk = bytes.subarray(offset, offset + 65536);
      const n = wasi(path, 'write', () => file.write(chunk, BigInt(offset)));
      offset += Number(n);
    }
  },
  readdir(path) {
    const [dir, rest] = preopenFor(path);
    const opened = wasi(path, 'list', () => dir.openAt({}, rest, { directory: true }, { read: true }));
    const stream = wasi(path, 'list', () => opened.readDirectory());
    const names = [];
    for (;;) {
      const entry = wasi(path, 'list', () => stream.readDirectoryEntry());
      if (entry === undefined || entry === null) break;
      names.push(entry.name);
    }
    return names.sort();
  },
};

/** Runs a wasi:filesystem call; its error code becomes an Error naming the path. */
function wasi(path, verb, call) {
  try {
    return call();
  } catch (e) {
    const code = e && e.payload !== undefined ? e.payload : e;
    // `(wasi error CODE)`: the host adds the tool's directories to a
    // failure that carries an OS error.
    throw new Error(`cannot ${verb} \`${path}\` (wasi error ${code})`);
  }
}

// The preopened directory for `path` and the path relative to it; the
// longest matching guest path wins, as in wasi-libc.
function preopenFor(path) {
  const clean = String(path).replace(/^\.\//, '');
  let best = null;
  for (const [dir, guest] of getDirectories()) {
    const prefix = guest === '.' ? '' : guest.replace(/\/$/, '') + '/';
    const inside =
      guest === '.' ? !clean.startsWith('/') : clean === guest || clean.startsWith(prefix);
    if (inside && (best === null || prefix.length > best[2])) {
      best = [dir, clean === guest ? '.' : clean.slice(prefix.length), prefix.length];
    }
  }
  if (best === null) {
    throw new Error(`\`${path}\` is not inside a directory this tool may use`);
  }
  return [best[0], best[1] === '' ? '.' : best[1]];
}
