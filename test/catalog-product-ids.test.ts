// A product id ("SVC-…") is written once, in the catalogue: each paid body's schema takes that id and no other, and
// the published examples carry it.
import { describe, expect, it } from 'vitest';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';

describe('product ids come from the catalogue', () => {
  const sold = PAID_RESOURCES.filter((resource) => resource.productId !== null);

  it.each(sold.map((resource) => [resource.id, resource] as const))(
    '%s: its schema takes the catalogue’s id and refuses another',
    (id, resource) => {
      const example = PAID_EXAMPLES[id] as Record<string, unknown>;
      expect(example.product_id).toBe(resource.productId);
      expect(resource.schema.safeParse(example).success).toBe(true);
      for (const other of sold.filter((r) => r.id !== id)) {
        expect(resource.schema.safeParse({ ...example, product_id: other.productId }).success, other.id).toBe(
          false,
        );
      }
    },
  );
});
