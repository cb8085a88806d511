CREATE TABLE items (key TEXT PRIMARY KEY, value TEXT NOT NULL, qty INTEGER DEFAULT 0, price REAL, data BLOB);
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT, at TEXT);
CREATE TABLE loose (a, b);
INSERT INTO items VALUES ('a', 'old', 1, 2.5, x'00ff'), ('b', 'bee', 9007199254740993, 1.0, NULL);
INSERT INTO audit (action, at) VALUES ('seed', '2026-01-01T00:00:00Z');
INSERT INTO loose VALUES (1, 'x'), (1, 'x');
