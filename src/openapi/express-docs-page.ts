import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join } from 'node:path';
import type { OpenApiDocument } from './openapi-document';

/** What the docs page adds to an Express app: GET routes; a miss goes on to Nest's not-found handler. */
export interface ExpressRoutes {
  get(path: string, handler: (request: IncomingMessage, response: ServerResponse, next: () => void) => void): unknown;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
};

/**
 * Swagger UI at `path` on Express, the same page @fastify/swagger-ui serves on Fastify: its own
 * bundled assets (read once, from that package), an initializer pointing at `path/json`, and the
 * same content security policy. Written with Node's response alone, so it needs nothing of Express
 * but its router.
 */
export function serveDocsOnExpress(
  express: ExpressRoutes,
  options: { path: string; document: OpenApiDocument; contentSecurityPolicy: string; title: string },
): void {
  const { path, contentSecurityPolicy } = options;
  const assets = bundledAssets();
  assets.set('swagger-initializer.js', Buffer.from(INITIALIZER));
  const page = Buffer.from(pageHtml(`${path}/static`, options.title));
  const document = Buffer.from(JSON.stringify(options.document));
  const answer = (response: ServerResponse, type: string, body: Buffer) => {
    response.writeHead(200, {
      'content-type': type,
      'content-length': body.length,
      'content-security-policy': contentSecurityPolicy,
    });
    response.end(body);
  };
  express.get(path, (_request, response) => answer(response, CONTENT_TYPES['.html'], page));
  express.get(`${path}/json`, (_request, response) => answer(response, CONTENT_TYPES['.json'], document));
  express.get(`${path}/static/:file`, (request, response, next) => {
    const file = (request as IncomingMessage & { params: { file: string } }).params.file;
    const body = assets.get(file);
    if (body === undefined) return next();
    answer(response, CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', body);
  });
}

/** Swagger UI's files as @fastify/swagger-ui bundles them, by name. */
function bundledAssets(): Map<string, Buffer> {
  const folder = join(dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static');
  const assets = new Map<string, Buffer>();
  for (const name of readdirSync(folder)) {
    if (Object.hasOwn(CONTENT_TYPES, extname(name))) assets.set(name, readFileSync(join(folder, name)));
  }
  return assets;
}

function pageHtml(assets: string, title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>${title}</title>
<link rel="stylesheet" type="text/css" href="${assets}/swagger-ui.css" />
<link rel="stylesheet" type="text/css" href="${assets}/index.css" />
<link rel="icon" type="image/png" href="${assets}/favicon-32x32.png" sizes="32x32" />
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="${assets}/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="${assets}/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
`;
}

/** A file, not an inline script: the policy allows scripts from the service only. */
const INITIALIZER = `window.onload = function () {
  var base = window.location.href.split('#', 1)[0].replace(/\\/?$/, '/');
  window.ui = SwaggerUIBundle({
    url: new URL('json', base).href,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null,
  });
};
`;
