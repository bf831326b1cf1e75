/**
 * The tables of `docs/configuration.md`, written from the schema so the docs cannot drift
 * (`configuration-tables.test.ts` compares them).
 */
import type { z } from 'zod';
import { commandSchemas, configurationSections, type SectionName } from './configuration-schema.js';
import { optionSpecifications, type OptionSpecification } from './configuration.js';
import { personalizeSchema } from '../commands/eval-command.js';

const commandNames: Record<keyof typeof commandSchemas, string> = {
  serve: 'serve',
  gateway: 'gateway',
  judge: 'judge',
  trainer: 'trainer',
  rejudge: 'rejudge',
  evalJudge: 'eval judge',
  client: 'status, policy list, policy activate',
  manager: 'manager',
  worker: 'worker',
  samplesExport: 'samples export',
  redact: 'redact, eval redaction',
};

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function shownDefault(specification: OptionSpecification): string {
  const value = specification.defaultValue;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return '';
  return `\`${JSON.stringify(value)}\``;
}

/** One row per option with a flag, grouped by component. */
export function optionsTable(): string {
  const rows = optionSpecifications
    .filter((specification) => specification.flag !== undefined)
    .map((specification) =>
      [
        `\`${specification.key}\``,
        specification.section,
        `\`${specification.flag}\``,
        `\`${specification.environment}\``,
        shownDefault(specification),
        specification.recipe ? 'yes' : '',
        cell(specification.description),
      ].join(' | '),
    );
  return ['| key | component | flag | variable | default | recipe may set | description |', '| --- | --- | --- | --- | --- | --- | --- |', ...rows.map((row) => `| ${row} |`)].join('\n');
}

/** One row per recipe setting: no flag, no variable. */
export function recipeTable(): string {
  const rows = optionSpecifications
    .filter((specification) => specification.section === 'recipe')
    .map((specification) => `| \`${specification.key}\` | ${shownDefault(specification)} | ${cell(specification.description)} |`);
  return ['| key | default | description |', '| --- | --- | --- |', ...rows].join('\n');
}

function componentsOf(schema: z.ZodObject): string {
  const keys = new Set(Object.keys(schema.shape));
  const parts = Object.entries(configurationSections).flatMap(([section, object]) => {
    const own = Object.keys(object.shape);
    const used = own.filter((key) => keys.has(key));
    if (used.length === 0) return [];
    return [used.length === own.length ? (section as SectionName) : `${section} (${used.join(', ')})`];
  });
  const settings = optionSpecifications.filter((specification) => specification.section === 'recipe').map((specification) => specification.key);
  const recipe = settings.filter((key) => keys.has(key));
  return [...parts, ...(recipe.length === 0 ? [] : [recipe.length === settings.length ? 'recipe' : `recipe (${recipe.join(', ')})`])].join(', ');
}

/** Which components' keys each command reads; the rest of a shared config file it ignores with a note. */
export function commandsTable(): string {
  const rows = [
    ...Object.entries(commandSchemas).map(([name, schema]) => `| ${commandNames[name as keyof typeof commandSchemas]} | ${componentsOf(schema)} |`),
    `| eval personalize | ${componentsOf(personalizeSchema)}; recipe settings as its own flags (\`clawrl eval personalize --help\`) |`,
  ];
  return ['| command | options it reads |', '| --- | --- |', ...rows].join('\n');
}
