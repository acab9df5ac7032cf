! The mpi_f08 module: a ring of 3 steps (Irecv/Isend/Waitall of 4 integers), a message to
! itself (Irecv, Isend, two Waits), 2 Allreduce of 4 integers, a Barrier, then MPI-IO:
! every rank opens <dir>/f08.dat, writes its 4 integers at byte 16 * rank with
! MPI_File_write_at_all, syncs, sets a view at 16 * nprocs + 8 * rank and writes 2
! integers there with MPI_File_write, and closes.
program fortran_mpi_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, step, x(4), y(4), pair(2), self_in(4)
  type(MPI_Request) :: requests(2), mine(2)
  type(MPI_File) :: fh
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=4096) :: directory
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call get_command_argument(1, directory)
  x = rank
  do step = 1, 3
    call MPI_Irecv(y, 4, MPI_INTEGER, mod(rank + nprocs - 1, nprocs), step, MPI_COMM_WORLD, requests(1))
    call MPI_Isend(x, 4, MPI_INTEGER, mod(rank + 1, nprocs), step, MPI_COMM_WORLD, requests(2))
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  end do
  call MPI_Irecv(self_in, 4, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, mine(1))
  call MPI_Isend(x, 4, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, mine(2))
  call MPI_Wait(mine(2), MPI_STATUS_IGNORE)
  call MPI_Wait(mine(1), MPI_STATUS_IGNORE)
  call MPI_Allreduce(x, y, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(y, x, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_open(MPI_COMM_WORLD, trim(directory) // '/f08.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh)
  x = rank
  offset = 16 * rank
  call MPI_File_write_at_all(fh, offset, x, 4, MPI_INTEGER, MPI_STATUS_IGNORE)
  call MPI_File_sync(fh)
  offset = 16 * nprocs + 8 * rank
  call MPI_File_set_view(fh, offset, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  pair = rank
  call MPI_File_write(fh, pair, 2, MPI_INTEGER, MPI_STATUS_IGNORE)
  call MPI_File_close(fh)
  call MPI_Finalize()
end program fortran_mpi_f08
