CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  total REAL NOT NULL
);
INSERT INTO customers (id, name, email) VALUES (1, 'Ada', 'ada@example.org');
INSERT INTO customers (id, name, email) VALUES (2, 'Grace', 'grace@example.org');
INSERT INTO customers (id, name, email) VALUES (3, 'Linus', 'linus@example.org');
INSERT INTO orders (customer_id, total) VALUES (1, 12.5);
INSERT INTO orders (customer_id, total) VALUES (2, 40.0);
