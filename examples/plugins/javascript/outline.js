// markdown_outline: the headings of a Markdown file, indented by level.
//
// A toolhost plugin for world `plugin-fs` (wit/plugin.wit), built with
// componentize-js. Files are reached only through wasi:filesystem: the
// directories the user granted this tool are its preopens.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

const TOOLS = [
  {
    name: 'markdown_outline',
    description:
      'List the headings of a Markdown file as an indented outline with line numbers. ' +
      'Use it to find your way around long documents before reading parts of them.',
    inputSchema: JSON.stringify({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The Markdown file.', 'x-toolhost-path': 'read' },
        max_level: { type: 'integer', minimum: 1, maximum: 6, default: 6 },
      },
      required: ['path'],
      additionalProperties: false,
    }),
    readOnly: true,
  },
];

// Thrown to return `failed(message)`; any other thrown value is turned
// into one by `callTool` below, so the model reads its message.
class ToolFailed extends Error {}

export function listTools() {
  return TOOLS;
}

export function callTool(name, input) {
  // componentize-js (0.23) lowers whatever `callTool` throws as the `err`
  // of its result. Anything but a `call-error` variant (`{ tag, val }`)
  // traps with "invalid variant tag value `undefined`", a crash that hides
  // the message, so every other thrown value becomes `failed`.
  try {
    return run(name, JSON.parse(input));
  } catch (e) {
    if (e && (e.tag === 'failed' || e.tag === 'invalid-input')) throw e;
    const message = e instanceof Error ? e.message : String(e);
    throw { tag: 'failed', val: message };
  }
}

function run(name, input) {
  if (name !== 'markdown_outline') {
    throw { tag: 'invalid-input', val: `no tool \`${name}\`` };
  }
  const text = readText(input.path);
  const maxLevel = input.max_level ?? 6;
  const lines = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const opening = line.match(/^\s{0,3}(`{3,}|~{3,})/);
    if (opening) {
      if (fence === null) fence = opening[1][0];
      else if (opening[1][0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading && heading[1].length <= maxLevel) {
      const level = heading[1].length;
      lines.push(`${'  '.repeat(level - 1)}${heading[2]} (line ${i + 1})`);
    }
  });
  if (lines.length === 0) throw new ToolFailed(`\`${input.path}\` has no headings`);
  return lines.join('\n') + '\n';
}

// Reads a UTF-8 file through the preopen whose guest path holds `path`.
function readText(path) {
  const [dir, rest] = preopenFor(path);
  let file;
  try {
    file = dir.openAt({}, rest, {}, { read: true });
  } catch (e) {
    throw new ToolFailed(`cannot open \`${path}\`: ${e.payload ?? e}`);
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
  // A file that is not UTF-8 throws a TypeError here, which `callTool` turns
  // into `failed` with its message.
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
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
  if (best === null) throw new ToolFailed(`\`${path}\` is not inside a directory this tool may read`);
  return [best[0], best[1] === '' ? '.' : best[1]];
}
