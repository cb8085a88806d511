-- A small shop: customers and their orders (business), an audit trail
-- (append-only), one serial counter.
CREATE TABLE customers (
  id integer PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  credit numeric(10, 2) NOT NULL DEFAULT 0
);
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customers (id),
  items jsonb NOT NULL,
  placed_at timestamptz NOT NULL
);
CREATE TABLE audit_log (
  id bigint PRIMARY KEY,
  event text NOT NULL
);
INSERT INTO customers VALUES
  (1, 'Ada', 'ada@example.com', 10.00),
  (2, 'Grace', 'grace@example.com', 0.50);
INSERT INTO orders (customer_id, items, placed_at) VALUES
  (1, '[{"sku": "bolt", "qty": 4}]', '2026-01-05 10:00:00+00'),
  (2, '[{"sku": "nut", "qty": 10}]', '2026-01-06 11:30:00+00');
INSERT INTO audit_log VALUES (1, 'shop opened');
