import { describe, expect, it } from 'vitest';
import { receiptLines, totals, type LineItem } from '../src/cart.js';
import { cents, formatEuros } from '../src/money.js';

const basket: LineItem[] = [
  { sku: 'coffee-beans', unitPrice: cents(12.5), quantity: 2 },
  { sku: 'filter-papers', unitPrice: cents(3.99), quantity: 1 },
];

describe('money', () => {
  it('keeps whole cents', () => {
    expect(cents(0.1) + cents(0.2)).toBe(cents(0.3));
  });

  it('formats euros', () => {
    expect(formatEuros(2899)).toBe('€28.99');
    expect(formatEuros(-5)).toBe('-€0.05');
  });
});

describe('cart', () => {
  it('adds up line items', () => {
    expect(totals(basket)).toEqual({ subtotal: 2899, discount: 0, total: 2899 });
  });

  it('applies a percentage discount, rounded to the cent', () => {
    expect(totals(basket, { code: 'WELCOME10', percent: 10 })).toEqual({ subtotal: 2899, discount: 290, total: 2609 });
  });

  it('refuses a fractional quantity', () => {
    expect(() => totals([{ sku: 'tea', unitPrice: 450, quantity: 1.5 }])).toThrow(RangeError);
  });

  it('prints a receipt', () => {
    expect(receiptLines(basket, { code: 'WELCOME10', percent: 10 })).toEqual([
      '2 x coffee-beans  €25.00',
      '1 x filter-papers  €3.99',
      'subtotal  €28.99',
      'WELCOME10 (-10%)  -€2.90',
      'total  €26.09',
    ]);
  });
});
