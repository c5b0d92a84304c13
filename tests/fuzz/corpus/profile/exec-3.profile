exec deny hashes:/nonexistent
