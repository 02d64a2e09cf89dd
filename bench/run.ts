// Runs every benchmark in turn: `npm run bench`.
await import('./generate.ts');
await import('./paywall.ts');
await import('./live-sources.ts');
