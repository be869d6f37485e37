import type { ConsoleScreens } from '../../../admin/src/pack-kit.js';

/**
 * CMS's console screens (declared by `admin` in packs/cms/index.ts): pages and posts are generated screens, their
 * `content` written in Markdown; site import previews an import from a URL before applying it. Form submissions
 * are read through the pack's forms, not listed as records.
 */
export default {
  routes: [{ path: '/content/import', screen: () => import('./SiteImport.js') }],
  menu: [{ section: 'Content', label: 'Site import', to: '/content/import' }],
  inputs: [{ namespace: 'cms', field: 'content', input: 'markdown' }],
  hidden: ['cms.form_submission'],
} satisfies ConsoleScreens;
