import { definePack } from '../../core/pack-api.js';
import { seedHealthcare } from './healthcare-seed.js';
import { prepareContent, removeContent } from './content-publish.hook.js';
import { withContentFields } from './content-type.js';
import { contentRoutes } from './content.routes.js';
import { pagesRoutes } from './pages.routes.js';
import { postsRoutes } from './posts.routes.js';
import { publicRoutes } from './public.routes.js';
import { importRoutes } from './import.routes.js';
import { ingestRoutes } from './ingest.routes.js';
import { contentTools } from './content.tools.js';

/**
 * CMS: content types (the open `cms` namespace), pages, posts, forms, site import, web ingestion,
 * competitor import and the public site runtime. Published content is indexed as knowledge. The site import
 * writes navigation and branding through `tenant-admin.siteProfile`; the Healthcare seed's content is CMS content.
 */
export default definePack({
  name: 'cms',
  description: 'Headless CMS: content types, pages, posts, forms, site import, knowledge and the public runtime',
  admin: 'admin/screens.ts',
  licensed: 'cms',
  namespaces: [{ name: 'cms', open: true, schemas: ['page', 'post', 'form', 'form_submission'], onRegister: withContentFields }],
  requires: ['tenant-admin.siteProfile'],
  events: ['cms.form.submitted'],
  seeds: { healthcare: seedHealthcare },
  hooks: {
    'cms.*.create': prepareContent,
    'cms.*.update': prepareContent,
    'cms.*.delete': removeContent,
  },
  routes(router, pack) {
    contentRoutes(router, pack);
    pagesRoutes(router, pack);
    postsRoutes(router, pack);
    publicRoutes(router, pack);
    importRoutes(router, pack);
    ingestRoutes(router, pack);
  },
  tools: contentTools,
});
