import { readFileSync } from 'node:fs';
import { frameLocation } from './harness.js';

/**
 * node --import tsx scripts/bench/cpu-profile-top.ts FILE.cpuprofile [top]
 *
 * Self time by function of a whole `.cpuprofile` (node --cpu-prof), idle left out, as shares of the busy time.
 */
interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }
const [file, top = '40'] = process.argv.slice(2);
if (!file) throw new Error('usage: cpu-profile-top.ts FILE.cpuprofile [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, i) => {
  const frame = nodes.get(id)!.callFrame;
  if (frame.functionName === '(idle)') return;
  const dt = profile.timeDeltas[i] ?? 0;
  busy += dt;
  const label = `${frame.functionName || '(anonymous)'} ${frameLocation(frame) || `:${frame.lineNumber + 1}`}`;
  self.set(label, (self.get(label) ?? 0) + dt);
});
console.log(`busy ${(busy / 1e6).toFixed(2)} s`);
for (const [label, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
  console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${label}`);
}
