CREATE TABLE sessions (id INTEGER PRIMARY KEY, token TEXT NOT NULL, user TEXT NOT NULL);
INSERT INTO sessions (token, user) VALUES (hex(randomblob(8)), 'alice');
