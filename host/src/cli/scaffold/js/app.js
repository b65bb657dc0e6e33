// {{name}}: a toolhost plugin (world `plugin-fs` of wit/plugin.wit), built
// with componentize-js. Files are reached only through wasi:filesystem: the
// directories the user granted this tool are its preopens.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

const TOOLS = [
  {
    name: '{{name}}',
    description: 'Count the lines, words and bytes of a text file.',
    inputSchema: JSON.stringify({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file to count.', 'x-toolhost-path': 'read' },
      },
      required: ['path'],
      additionalProperties: false,
    }),
    readOnly: true,
  },
];

export function listTools() {
  return TOOLS;
}

export function callTool(name, input) {
  // Throw `{ tag: 'failed', val: message }` for the tool's own failure.
  // componentize-js lowers whatever `callTool` throws as the `err` of its
  // result, so anything else (a plain `Error`) would trap with "invalid
  // variant tag value `undefined`", a crash that hides its message: every
  // other thrown value becomes `failed` here.
  try {
    return run(name, JSON.parse(input));
  } catch (e) {
    if (e && (e.tag === 'failed' || e.tag === 'invalid-input')) throw e;
    const message = e instanceof Error ? e.message : String(e);
    throw { tag: 'failed', val: message };
  }
}

function run(name, input) {
  if (name !== '{{name}}') {
    throw { tag: 'invalid-input', val: `no tool \`${name}\`` };
  }
  const bytes = readBytes(input.path);
  const text = new TextDecoder('utf-8').decode(bytes);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const words = text.split(/\s+/).filter((w) => w !== '').length;
  return `${lines} lines, ${words} words, ${bytes.length} bytes in ${input.path}`;
}

// Reads a file through the preopen whose guest path holds `path`.
function readBytes(path) {
  const [dir, rest] = preopenFor(path);
  let file;
  try {
    file = dir.openAt({}, rest, {}, { read: true });
  } catch (e) {
    throw new Error(`cannot open \`${path}\`: ${e.payload ?? e}`);
  }
  const chunks = [];
  let offset = 0n;
  for (;;) {
    const [chunk, end] = file.read(65536n, offset);
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
  return bytes;
}

// The preopened directory for `path` and the path relative to it; the
// longest matching guest path wins, as in wasi-libc.
function preopenFor(path) {
  const clean = path.replace(/^\.\//, '');
  let best = null;
  for (const [dir, guest] of getDirectories()) {
    const prefix = guest === '.' ? '' : guest.replace(/\/$/, '') + '/';
    const inside = guest === '.' ? !clean.startsWith('/') : clean === guest || clean.startsWith(prefix);
    if (inside && (best === null || prefix.length > best[2])) {
      best = [dir, clean === guest ? '.' : clean.slice(prefix.length), prefix.length];
    }
  }
  if (best === null) throw new Error(`\`${path}\` is not inside a directory this tool may read`);
  return [best[0], best[1] === '' ? '.' : best[1]];
}
