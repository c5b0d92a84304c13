/* task.c - placeholder */
