import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NotFound } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';

/** swagger-ui-dist's folder in node_modules: the page works offline, no CDN. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the page uses; nothing else is served (no path ever reaches the file system). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
};

export const DOCS_SPEC_URL = '/api/v1/openapi.json';

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Headless platform API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/initializer.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io. filter: a box that
// narrows the operations by tag; with 150 tags and operations or more Swagger UI lists them in a virtual list.
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(DOCS_SPEC_URL)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    filter: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html'
  });
});
`;

/** GET /docs: the API reference (Swagger UI from swagger-ui-dist, served by the service itself). */
export function docsRoutes(router: PackRouter): void {
  router.get('/docs', {
    summary: 'API reference page (Swagger UI) showing /api/v1/openapi.json', tags: ['operations'], auth: 'public',
    produces: 'text/html', response: { type: 'string' },
  }, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = PAGE;
  });

  router.get('/docs/:file', {
    summary: 'Static files of the API reference page', tags: ['operations'], auth: 'public',
    produces: 'application/octet-stream', response: { type: 'string' }, errors: ['not_found'],
  }, (ctx) => {
    const file = ctx.params.file;
    if (file === 'initializer.js') {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = INITIALIZER;
      return;
    }
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : null;
    if (!type) throw NotFound(`No file ${file} in the API reference`);
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = createReadStream(join(SWAGGER_UI_DIR, file));
  });
}
