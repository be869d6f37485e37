import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built by `npm run build:admin` (run by `npm install`) into admin/dist, served by the service at /admin.
export default defineConfig({
  root: import.meta.dirname,
  base: '/admin/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or data: modules: the console runs under script-src 'self'.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
    // CONSOLE_MINIFY=false: readable function names in a CPU profile (npm run bench:console -- --profile).
    minify: process.env.CONSOLE_MINIFY !== 'false',
  },
});
