import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fromRoot } from '../base/package-root.js';

/** Where `npm run build:admin` (run by `npm install`) writes the console: admin/dist. */
export const CONSOLE_DIST = `${fromRoot('admin', 'dist')}/`;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export interface ConsoleFile {
  path: string;
  type: string;
  size: number;
  /** A gzip copy written by the build, served to clients that accept gzip. */
  gzipPath: string | null;
}

/**
 * The built console's files by URL path under /admin/ (e.g. `assets/index-3f2a.js`). Only files listed
 * here are ever served, so no request path reaches the file system. Listed again when an unknown asset
 * is asked for (a rebuild while the service runs), at most once a second.
 */
export class ConsoleFiles {
  private files = new Map<string, ConsoleFile>();
  private listedAt = 0;

  constructor(private readonly dir = CONSOLE_DIST) {
    this.list();
  }

  get built(): boolean {
    return this.files.has('index.html') || this.relist('index.html');
  }

  find(urlPath: string): ConsoleFile | null {
    return this.files.get(urlPath) ?? (this.relist(urlPath) ? this.files.get(urlPath)! : null);
  }

  private relist(urlPath: string): boolean {
    if (Date.now() - this.listedAt < 1000) return false;
    this.list();
    return this.files.has(urlPath);
  }

  private list(): void {
    this.listedAt = Date.now();
    const files = new Map<string, ConsoleFile>();
    if (existsSync(this.dir)) {
      for (const name of readdirSync(this.dir, { recursive: true, encoding: 'utf8' })) {
        const path = join(this.dir, name);
        const type = TYPES[extname(name)];
        if (!type || !statSync(path).isFile()) continue;
        const gzipPath = `${path}.gz`;
        files.set(relative(this.dir, path).split(sep).join('/'), {
          path, type, size: statSync(path).size, gzipPath: existsSync(gzipPath) ? gzipPath : null,
        });
      }
    }
    this.files = files;
  }
}
