/* Calls toylib's functions a known number of times and checks that each returns what the
 * library returns (so a hook that forwards wrongly fails the program): toy_open once, 10
 * writes of 100 bytes, 5 reads of 64, a write on a bad handle (fails), toy_flush,
 * toy_name, toy_notify (its callback runs), toy_version, toy_secret (not hooked),
 * toy_close.
 *
 * usage: toy_user DIR */
#include <stdio.h>
#include <string.h>

#include "toylib.h"

static int notified = -1;
static void on_notify(int type) { notified = type; }

int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data.toy", argc > 1 ? argv[1] : ".");
    int wrong = 0;
    toy_file file = toy_open(path, 0);
    wrong += file != 42;
    char data[100] = {0};
    for (int i = 0; i < 10; i++) wrong += toy_write(file, data, sizeof data) != 100;
    for (int i = 0; i < 5; i++) wrong += toy_read(file, data, 64) != 64;
    wrong += toy_write(-5, data, 10) != -1;
    wrong += toy_flush(file) != 0;
    char name[16];
    wrong += toy_name(file, name, sizeof name) != name || strcmp(name, "toy") != 0;
    wrong += toy_notify(file, on_notify, 9) != 0 || notified != 9;
    wrong += toy_version() != 3;
    wrong += toy_secret(file) != 7;
    wrong += toy_close(file) != 0;
    if (wrong) fprintf(stderr, "toy_user: %d results wrong\n", wrong);
    return wrong != 0;
}
