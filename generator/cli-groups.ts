// Commands that other modules define (the arena store, backfill, sources, the paywall and `emi buy`). Each group
// is loaded only when the command line names one of its commands; otherwise a placeholder that carries the same
// one-line summary stands in for it in `emi --help` (test/cli-lazy.test.ts keeps the summaries in step).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { stateFolder } from './defaults.ts';

export type RegisterCommands = (program: Command) => void;

export interface CommandGroup {
  /** Top-level command names and their one-line summaries, as the module registers them. */
  summaries: Readonly<Record<string, string>>;
  load(): Promise<RegisterCommands>;
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    summaries: { arena: 'arena rounds and votes (stored in the arena SQLite store)' },
    load: async () => {
      const { registerArenaCommands } = await import('./state/cli.ts');
      return (program) =>
        registerArenaCommands(program, {
          storePath: () => resolve(stateFolder(), 'arena.sqlite'),
        });
    },
  },
  {
    summaries: {
      backfill: 'replay the simulated market over past rounds to build arena history (marked replayed)',
    },
    load: async () => (await import('./backfill-command.ts')).registerBackfillCommand,
  },
  {
    summaries: { sources: 'market-data sources: check venues and configuration' },
    load: async () => (await import('./sources/cli.ts')).registerSourcesCommands,
  },
  {
    summaries: {
      paywall:
        'run the x402 v2 paywall worker on Node (the development facilitator when no facilitator URL is set)',
      buy: 'pay for a paid path with test money: a development wallet funded by the development facilitator',
    },
    load: async () => (await import('../paywall-worker/cli.ts')).registerPaywallCommands,
  },
  {
    summaries: {
      publisher:
        'the publisher programme: branded resale paid straight to the publisher, credits, statements',
    },
    load: async () => (await import('../paywall-worker/publishers/cli.ts')).registerPublisherCommands,
  },
];

/** The group whose command `args` (the command line after `node emi`) runs or asks help for, if any. */
export function commandGroupFor(args: readonly string[]): CommandGroup | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMAND_GROUPS.find((group) => name !== undefined && Object.hasOwn(group.summaries, name));
}

/**
 * Stand-ins that describe their commands. Running one (a program built without the group, as a test may do)
 * loads the group and hands the command line from the command's name on to `rerun`, which parses it again with
 * the real commands (a placeholder knows no option, so every argument it was given is in `command.args`).
 */
export function addPlaceholders(
  program: Command,
  group: CommandGroup,
  rerun: (group: CommandGroup, args: string[]) => Promise<void>,
): void {
  for (const [name, summary] of Object.entries(group.summaries)) {
    program
      .command(name)
      .description(summary)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action((...received: unknown[]) => {
        const command = received.at(-1) as Command;
        return rerun(group, [name, ...command.args]);
      });
  }
}
