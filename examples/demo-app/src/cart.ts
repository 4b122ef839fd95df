import { formatEuros, percentOf, type Cents } from './money.js';

export interface LineItem {
  sku: string;
  unitPrice: Cents;
  quantity: number;
}

export interface Discount {
  code: string;
  percent: number;
}

export interface Totals {
  subtotal: Cents;
  discount: Cents;
  total: Cents;
}

export function subtotal(items: readonly LineItem[]): Cents {
  return items.reduce((sum, item) => sum + item.unitPrice * item.quantity, 0);
}

export function totals(items: readonly LineItem[], discount?: Discount): Totals {
  if (items.some((item) => !Number.isInteger(item.quantity) || item.quantity < 1)) {
    throw new RangeError('every line item needs a whole quantity of at least 1');
  }
  const before = subtotal(items);
  const off = discount ? percentOf(before, discount.percent) : 0;
  return { subtotal: before, discount: off, total: before - off };
}

export function receiptLines(items: readonly LineItem[], discount?: Discount): string[] {
  const { subtotal: before, discount: off, total } = totals(items, discount);
  const lines = items.map((item) => `${item.quantity} x ${item.sku}  ${formatEuros(item.unitPrice * item.quantity)}`);
  lines.push(`subtotal  ${formatEuros(before)}`);
  if (discount) lines.push(`${discount.code} (-${discount.percent}%)  -${formatEuros(off)}`);
  lines.push(`total  ${formatEuros(total)}`);
  return lines;
}
