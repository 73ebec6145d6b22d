// Serves a static folder on localhost only (127.0.0.1), with the MIME types the page needs
// (application/wasm for .wasm, so browsers compile it while it downloads). Used by
// scripts/web.sh and by the browser test; any web server does the same job.
//
//   node serve.mjs FOLDER [PORT]   (PORT 0 or none: a free port) -> prints "serving FOLDER at URL"
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
};

export function serve(folder, port = 0) {
  const root = resolve(folder);
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    const file = normalize(join(root, path.endsWith('/') ? path + 'index.html' : path));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end('outside the served folder');
      return;
    }
    try {
      const body = await readFile(file);
      res
        .writeHead(200, { 'Content-Type': types[extname(file)] || 'application/octet-stream' })
        .end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: ' + path);
    }
  });
  return new Promise((ok, fail) => {
    server.on('error', fail);
    server.listen(port, '127.0.0.1', () =>
      ok({ server, url: `http://127.0.0.1:${server.address().port}/` }),
    );
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [folder, port] = process.argv.slice(2);
  if (!folder) {
    console.error('usage: node serve.mjs FOLDER [PORT]');
    process.exit(2);
  }
  const { url } = await serve(folder, Number(port || 0));
  console.log(`serving ${resolve(folder)} at ${url} (Ctrl-C stops)`);
}
