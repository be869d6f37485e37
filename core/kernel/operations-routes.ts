import type { Config } from '../../config/index.js';
import { consoleRoutes } from '../admin-console/console.routes.js';
import { docsRoutes } from '../docs/docs.routes.js';
import { authConfigRoutes } from '../http/auth-config.routes.js';
import { PackRouter, type RouteDeps } from '../http/route.js';
import { metricsRoutes } from '../http/metrics.routes.js';
import { openapiRoutes } from '../openapi/openapi.routes.js';
import { OpenApiService } from '../openapi/openapi.service.js';
import type { LoadedPack } from './pack-loader.js';
import type { KernelInternals } from './services.js';

/** Licensed module of each pack by name, for the OpenAPI document. */
export function packModulesOf(packs: LoadedPack[]): Record<string, string | null> {
  return Object.fromEntries(packs.map(({ definition }) => [definition.name, definition.licensed ?? null]));
}

/**
 * Self-description and operations: GET /api/v1/openapi.json on the kernel router, and a router at the
 * root for GET /docs (the API reference), GET /admin (the admin console) and GET /metrics (Prometheus);
 * GET /api/v1/auth/config and /auth/me tell clients how to sign in and who they are.
 */
export function operationsRoutes(deps: RouteDeps, kernelRouter: PackRouter, kernel: KernelInternals, config: Config, packs: LoadedPack[]): PackRouter {
  const openapi = new OpenApiService({
    routes: deps.routeTable, config, schemas: kernel.schemas, tenants: kernel.tenants, packModules: packModulesOf(packs),
  });
  openapiRoutes(kernelRouter, openapi, kernel.authenticator, kernel.tenants);
  authConfigRoutes(kernelRouter, config);
  const root = new PackRouter(deps, 'kernel', null, '');
  docsRoutes(root);
  consoleRoutes(root, config);
  metricsRoutes(root, kernel.metrics, {
    token: config.metricsToken,
    hidden: config.isProduction && !config.metricsToken && !config.metricsPublic,
  });
  return root;
}
