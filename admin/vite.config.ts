import react from '@vitejs/plugin-react';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

/**
 * The entry (main.ts) starts the first screen's API requests, then imports the console (start.tsx): a
 * modulepreload link for it and the chunks it imports lets the browser fetch them at once, with the entry.
 */
function preloadConsole(): Plugin {
  return {
    name: 'preload-console',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const chunk = Object.values(ctx.bundle ?? {}).find((c) => c.type === 'chunk' && c.isDynamicEntry && c.name === 'start');
        if (chunk?.type !== 'chunk') return html;
        return [chunk.fileName, ...chunk.imports].filter((file) => file !== ctx.chunk?.fileName).map((file) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `/admin/${file}` }, injectTo: 'head' as const }));
      },
    },
  };
}

/**
 * The first screen runs most of the console's two large chunks: V8's explicit compile hint makes Chromium compile
 * them whole while it streams them in, on a background thread, instead of function by function on the main
 * thread as each is first called (https://v8.dev/blog/explicit-compile-hints). Other browsers ignore the comment.
 */
function compileHints(): Plugin {
  return {
    name: 'compile-hints',
    apply: 'build',
    enforce: 'post',
    generateBundle: {
      // After Vite's own (its preload helper goes at the top of the chunk): the comment must come first.
      order: 'post',
      handler(_options, bundle) {
        for (const chunk of Object.values(bundle)) {
          if (chunk.type === 'chunk' && (chunk.name === 'start' || chunk.name === 'ra-core')) chunk.code = `//# allFunctionsCalledOnLoad\n${chunk.code}`;
        }
      },
    },
  };
}

// Built by `npm run build:admin` (run by `npm install`) into admin/dist, served by the service at /admin.
export default defineConfig({
  root: import.meta.dirname,
  base: '/admin/',
  plugins: [react(), preloadConsole(), compileHints()],
  // The packs' console screens live beside their packs (packs/<name>/admin/), outside this root: the build follows
  // the imports of pack-screens.generated.ts there, and the dev server may serve them.
  server: { fs: { allow: [join(import.meta.dirname, '..')] } },
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    // Browsers of 2022 on (module scripts need no older ones): class fields, optional chaining and the like
    // stay as written instead of transpiled helpers, less code to parse and run.
    target: 'es2022',
    emptyOutDir: true,
    // No inline scripts or data: modules: the console runs under script-src 'self'.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
    // CONSOLE_MINIFY=false: readable function names in a CPU profile (npm run bench:console -- --profile).
    minify: process.env.CONSOLE_MINIFY !== 'false',
    rollupOptions: {
      output: {
        // ra-core in one chunk: split between the console and its on-demand forms, its util index and a module
        // it re-exports would import each other across chunks (Rollup warns of a broken execution order).
        manualChunks: (id) => (id.includes('/node_modules/ra-core/') ? 'ra-core' : undefined),
      },
    },
  },
});
