/* next_b.c — test library: the second definition of next_probe_name. */
const char *next_probe_name(void);
const char *next_probe_name(void)
{
    return "b";
}
