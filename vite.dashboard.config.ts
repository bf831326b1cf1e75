import path from 'node:path';
import { defineConfig } from 'vite';

// The dashboard's browser bundle (`npm run build`): src/dashboard/ui → dist/dashboard-ui, served by
// the gateway at `/` and `/dashboard/*` (src/dashboard/load-dashboard-assets.ts). Preact renders
// the pages, uPlot draws the charts; both are bundled, so the page loads nothing from elsewhere.
export default defineConfig({
  root: path.resolve(import.meta.dirname, 'src/dashboard/ui'),
  base: '/dashboard/',
  logLevel: 'warn',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.resolve(import.meta.dirname, 'dist/dashboard-ui'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 200,
  },
});
