import { createReadStream } from 'node:fs';
import type { Config } from '../../config/index.js';
import type { AppContext } from '../http/app-state.js';
import { NotFound } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import { ConsoleFiles, type ConsoleFile } from './console-files.js';

/**
 * The console's Content-Security-Policy: scripts only from the service itself (no inline script, no eval),
 * API calls to the service and, when configured, the identity provider; nothing may frame it. Styles allow
 * inline because the component library (MUI, through emotion) injects its style sheets at run time.
 */
export function consoleContentSecurityPolicy(config: Config): string {
  const issuer = config.auth.consoleClientId && config.auth.issuer ? new URL(config.auth.issuer).origin : null;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${issuer ? ` ${issuer}` : ''}`,
    "object-src 'none'",
    "base-uri 'self'",
    `form-action 'self'${issuer ? ` ${issuer}` : ''}`,
    "frame-ancestors 'none'",
  ].join('; ');
}

const NOT_BUILT = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Admin console not built</title></head>
<body><h1>The admin console is not built</h1><p>Run <code>npm install</code> (or <code>npm run build:admin</code>) and reload.</p></body></html>\n`;

/**
 * GET /admin and everything under it: the admin console, a single-page app built by Vite into admin/dist.
 * Hashed files under /admin/assets/ are cached for a year; any other path answers index.html (the app
 * routes in the browser), never cached, so a new build is picked up on the next load. Without a build, 404 with a
 * page that says how to make one.
 */
export function consoleRoutes(router: PackRouter, config: Config, files = new ConsoleFiles()): void {
  const csp = consoleContentSecurityPolicy(config);
  const spec = {
    summary: 'The admin console (a single-page app over this API); paths under /admin/ are routed in the browser',
    tags: ['operations'], auth: 'public' as const, produces: 'text/html', response: { type: 'string' }, errors: ['not_found' as const],
    answers: { 404: 'The console is not part of this build (an HTML page that says how to build it)' },
  };

  const serve = (ctx: AppContext) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    const path = ctx.params.path ?? '';
    if (path.startsWith('assets/')) {
      const file = files.find(path);
      if (!file) throw NotFound(`No file ${path} in the admin console`);
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      send(ctx, file);
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    const asset = path && !path.includes('/') ? files.find(path) : null;
    if (asset && path !== 'index.html') return send(ctx, asset);
    const index = files.built ? files.find('index.html') : null;
    if (!index) {
      // Not there, rather than unavailable: no retry brings it (503 would say it may come back by itself).
      ctx.status = 404;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = NOT_BUILT;
      return;
    }
    send(ctx, index);
  };
  router.get('/admin', spec, serve);
  router.get('/admin/*path', spec, serve);
}

function send(ctx: AppContext, file: ConsoleFile): void {
  ctx.type = file.type;
  ctx.vary('Accept-Encoding');
  if (file.gzipPath && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = createReadStream(file.gzipPath);
    return;
  }
  ctx.length = file.size;
  ctx.body = createReadStream(file.path);
}
