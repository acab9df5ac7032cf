/* Included by toylib.h from beside it: its functions are candidates too. */
int toy_helper(int value);
