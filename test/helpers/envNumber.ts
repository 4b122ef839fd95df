/** A campaign's size from the environment: a whole number above 0, or `fallback` when unset or empty. */
export function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}=${text}: give a whole number above 0`);
  return value;
}
