import { Suspense } from 'react';
import { panelsFor, screenOf } from './pack-screens.js';

/** The packs' panels of a record's page or edit form (inside react-admin's record context), each loaded on demand. */
export function PackPanels({ resource, on }: { resource: string; on: 'show' | 'edit' }) {
  return (
    <>
      {panelsFor(resource, on).map((p, i) => {
        const Panel = screenOf(p.panel);
        return <Suspense key={i} fallback={null}><Panel /></Suspense>;
      })}
    </>
  );
}
