/** Amounts are whole cents: floating-point euros would drift (0.1 + 0.2 !== 0.3). */
export type Cents = number;

export function cents(euros: number): Cents {
  return Math.round(euros * 100);
}

export function formatEuros(amount: Cents): string {
  const sign = amount < 0 ? '-' : '';
  const abs = Math.abs(amount);
  const whole = Math.floor(abs / 100);
  const fraction = String(abs % 100).padStart(2, '0');
  return `${sign}€${whole}.${fraction}`;
}

/** A percentage of an amount, rounded half away from zero to the cent. */
export function percentOf(amount: Cents, percent: number): Cents {
  const exact = (amount * percent) / 100;
  return Math.sign(exact) * Math.round(Math.abs(exact));
}
