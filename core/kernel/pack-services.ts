/**
 * The services packs provide, by name (`<pack>.<service>`). Empty here: the providing pack adds its own by
 * declaration merging through the pack API, so that `pack.use('erp.catalog')` is typed wherever it is read:
 *
 *     declare module '../../core/pack-api.js' {
 *       interface PackServices { 'erp.catalog': Catalog }
 *     }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- an interface, empty until packs merge into it
export interface PackServices {}
