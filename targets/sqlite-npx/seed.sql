CREATE TABLE notes (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL
);
INSERT INTO notes (id, title, body) VALUES (1, 'groceries', 'milk, bread');
INSERT INTO notes (id, title, body) VALUES (2, 'meeting', 'Tuesday 10:00');
INSERT INTO notes (id, title, body) VALUES (3, 'ideas', 'write the audit');
